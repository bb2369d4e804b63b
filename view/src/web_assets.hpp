#pragma once
// The embedded page's asset table, declared publicly in eit/view/web_assets.hpp (the tests read
// it).
#include "eit/view/web_assets.hpp"
