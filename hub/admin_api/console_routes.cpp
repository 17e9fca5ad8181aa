#include "cascade/hub/admin_api/console_routes.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "cascade/hub/admin_api/console_files.hpp"

namespace cascade::hub::admin_api {

namespace {

constexpr std::string_view kPrefix = "/ui/";
constexpr std::string_view kIndex = "index.html";

// Only this server's own files and API: a console that has been tampered
// with in transit, or data that slipped past its escaping, cannot load a
// script from elsewhere or send what it reads anywhere else.
constexpr std::string_view kSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kTypes{{
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".json", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".txt", "text/plain; charset=utf-8"},
}};

http::Response redirect_to_console() {
  http::Response response;
  response.status = 302;
  response.content_type = "text/plain; charset=utf-8";
  response.body = "the console is at /ui/\n";
  response.headers.emplace_back("Location", std::string(kPrefix));
  return response;
}

http::Response file_response(const EmbeddedFile& file) {
  http::Response response;
  response.status = 200;
  response.content_type = std::string(content_type_of(file.name));
  response.body = std::string(file.bytes);
  response.headers = {{"Cache-Control", "no-cache"},
                      {"X-Content-Type-Options", "nosniff"},
                      {"Content-Security-Policy", std::string(kSecurityPolicy)},
                      {"Referrer-Policy", "no-referrer"}};
  return response;
}

http::Response serve(std::string_view name) {
  const auto files = console_files();
  const auto found = std::find_if(files.begin(), files.end(),
                                  [name](const EmbeddedFile& f) { return f.name == name; });
  if (found == files.end())
    return http::Response::error(404, "no_file", "the console has no file " + std::string(name));
  return file_response(*found);
}

}  // namespace

std::string_view content_type_of(std::string_view file_name) {
  for (const auto& [extension, type] : kTypes)
    if (file_name.ends_with(extension)) return type;
  return "application/octet-stream";
}

bool is_console_path(std::string_view path) {
  return path == "/" || path == "/ui" || path.starts_with(kPrefix);
}

void add_console_routes(http::Router& router) {
  router.add("GET", "/",
             [](const http::Request&, const http::PathParams&, const http::ResponderPtr&) {
               return redirect_to_console();
             });
  // "/ui" and "/ui/" are the same route (empty segments are dropped): only
  // the second is the page, whose relative links name files under /ui/.
  router.add("GET", "/ui",
             [](const http::Request& request, const http::PathParams&, const http::ResponderPtr&) {
               return request.path.ends_with('/') ? serve(kIndex) : redirect_to_console();
             });
  router.add("GET", "/ui/{file*}",
             [](const http::Request&, const http::PathParams& params, const http::ResponderPtr&) {
               return serve(params.at("file"));
             });
}

}  // namespace cascade::hub::admin_api
