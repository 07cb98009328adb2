/** Pages of the stock nginx distribution, as test fixtures. */

/** The stock `html/50x.html` of nginx 1.22 (497 bytes). */
export const STOCK_50X = [
  "<!DOCTYPE html>",
  "<html>",
  "<head>",
  "<title>Error</title>",
  "<style>",
  "html { color-scheme: light dark; }",
  "body { width: 35em; margin: 0 auto;",
  "font-family: Tahoma, Verdana, Arial, sans-serif; }",
  "</style>",
  "</head>",
  "<body>",
  "<h1>An error occurred.</h1>",
  "<p>Sorry, the page you are looking for is currently unavailable.<br/>",
  "Please try again later.</p>",
  "<p>If you are the system administrator of this resource then you should check",
  "the error log for details.</p>",
  "<p><em>Faithfully yours, nginx.</em></p>",
  "</body>",
  "</html>",
  "",
].join("\n");
