#pragma once
// The web console of the hub's HTTP admin API (docs/console.md): a page and
// its script and stylesheet, served from the bytes built into the binary
// (console_files.hpp). The console reads and acts through /api/v1/ alone;
// these routes only hand out its files:
//   GET /              302 to /ui/
//   GET /ui            302 to /ui/ (so that the page's relative links resolve)
//   GET /ui/           index.html
//   GET /ui/{file}     a console file, 404 `no_file` for any other name
// Every file is sent with its Content-Type, `Cache-Control: no-cache` (a
// newer hub's console is fetched again) and a Content-Security-Policy that
// lets the page run only its own script and styles and talk only to this
// server: nothing is fetched from the network, no inline script runs.

#include <string_view>

#include "cascade/http/router.hpp"

namespace cascade::hub::admin_api {

void add_console_routes(http::Router& router);

// True for the paths the routes above serve. They hold no state, so they
// need no token: a browser cannot send a bearer token when it loads a page.
// The API calls the page makes follow the API's rules.
bool is_console_path(std::string_view path);

// The Content-Type of a console file, by its extension.
std::string_view content_type_of(std::string_view file_name);

}  // namespace cascade::hub::admin_api
