#pragma once
// HttpSession: one HTTP connection. Serves the page's files, GET /api/state and /api/stats,
// POST /api/recapture and /api/stats/reset, and hands a WebSocket upgrade of /ws to a WsSession.
// Requests whose Origin names another host than Host are refused (403): another web page in the
// same browser must not drive the view. Threads: the server thread only.
#include <memory>
#include <utility>  // before Boost: 1.74's asio uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "view_server_impl.hpp"

namespace eit::view {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(boost::asio::ip::tcp::socket socket, std::weak_ptr<ViewServer::Impl> server);
  void start() { read(); }

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;
  void read();
  void handle(Request request);
  Response respond(const Request& request, ViewServer::Impl& server);
  void write(Response response);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  Request request_;
  std::weak_ptr<ViewServer::Impl> server_;
};

}  // namespace eit::view
