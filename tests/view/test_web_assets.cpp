// The page is compiled in: every file the page loads is in the asset table with its content type,
// and the server's address parser accepts what --http documents and names what it rejects.
#include <doctest/doctest.h>

#include <regex>
#include <stdexcept>
#include <string>

#include "eit/view/view_server.hpp"
#include "eit/view/web_assets.hpp"

using namespace eit::view;

TEST_CASE("web assets: / is the page, and every script and style it links is embedded") {
  const WebAsset* index = find_web_asset("/");
  REQUIRE(index != nullptr);
  CHECK(index->content_type.starts_with("text/html"));
  CHECK(find_web_asset("/index.html?x=1") == index);
  const std::string html(index->bytes);
  const std::regex link(R"re((?:src|href)="(/[^"]+)")re");
  int linked = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), link); it != std::sregex_iterator();
       ++it, ++linked) {
    const std::string path = (*it)[1];
    const WebAsset* a = find_web_asset(path);
    INFO(path);
    REQUIRE(a != nullptr);
    CHECK(!a->bytes.empty());
    if (path.ends_with(".js")) CHECK(a->content_type.starts_with("text/javascript"));
    if (path.ends_with(".css")) CHECK(a->content_type.starts_with("text/css"));
  }
  CHECK(linked >= 6);
  CHECK(find_web_asset("/no-such-file.js") == nullptr);
  CHECK(find_web_asset("/../CMakeLists.txt") == nullptr);
}

TEST_CASE("--http addresses: HOST:PORT, :PORT or PORT, loopback by default") {
  auto o = parse_http_address("127.0.0.1:0");
  CHECK(o.address == "127.0.0.1");
  CHECK(o.port == 0);
  o = parse_http_address(":8080");
  CHECK(o.address == "127.0.0.1");
  CHECK(o.port == 8080);
  o = parse_http_address("9000");
  CHECK(o.address == "127.0.0.1");
  CHECK(o.port == 9000);
  o = parse_http_address("[::1]:81");
  CHECK(o.address == "::1");
  CHECK(o.port == 81);
  CHECK_THROWS_WITH_AS(parse_http_address("localhost:http"), doctest::Contains("localhost:http"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_http_address("127.0.0.1:70000"), std::invalid_argument);
}
