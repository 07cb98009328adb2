/**
 * The SSI documents the side-by-side tests serve (statically and through a
 * proxied location).
 */

/** Name → document (ASCII: the raw answers are read as text). */
export const PAGES: Record<string, string> = {
  "plain.html": "<html><body>plain page</body></html>\n",
  "echo.html": 'a<!--# echo var="uri" -->b<!--#echo var="host"-->c' +
    '<!--# echo var="no_such_var" -->d<!--# echo var="no_such" default="dflt" -->' +
    '<!--# echo var="arg_q" -->e<!--# echo var="HTTP_X_T" -->f' +
    '<!--# echo var="arg_q" default="" -->g\n',
  "encode.html":
    '<!--# set var="s" value="<a href=\\"x\\">&amp; \'q\' {|}^` %/" -->' +
    '[<!--# echo var="s" -->][<!--# echo var="s" encoding="url" -->]' +
    '[<!--# echo var="s" encoding="none" -->][<!--# echo var="s" -->]' +
    '[<!--# echo var="s" encoding="bogus" -->][<!--# echo var="s" encoding="entity" -->]',
  "set.html":
    '<!--# set var="a" value="x\\$y \\q \\\\ $uri ${host}z $no_such|" -->' +
    '<!--# echo var="a" encoding="none" -->|' +
    '<!--# set var="B" value="$a$a" --><!--# echo var="b" -->|' +
    "<!--# set var='c' value='single \"q\"' --><!--# echo var=\"c\" -->|" +
    '<!--# set var="d" value="${a" -->|<!--# set var="e" value="$" -->|' +
    '<!--# set var="f" value="a$-b" -->|',
  "if.html":
    '<!--# if expr="$arg_q" -->has q<!--# else -->no q<!--# endif -->|' +
    '<!--# if expr="$arg_q = one" -->one<!--# elif expr="$arg_q = two" -->two' +
    '<!--# elif expr="$arg_q" -->other<!--# else -->none<!--# endif -->|' +
    '<!--# if expr="$arg_q != one" -->not one<!--# endif -->|' +
    '<!--# if expr="$URI = /\\/(i)(f)\\.(?<ext>html)\\$/" -->[$1=<!--# echo var="1" -->' +
    ' $2=<!--# echo var="2" --> $0=<!--# echo var="0" --> ext=<!--# echo var="ext" -->]' +
    "<!--# endif -->|" +
    '<!--# if expr="$uri = /html$/" -->dollar<!--# endif -->|' +
    '<!--# if expr="$uri = /nomatch/" -->yes<!--# else -->no<!--# endif -->|' +
    '<!--# if expr="$uri != /if/" -->yes<!--# else -->no<!--# endif -->|' +
    '<!--# if expr="\\"x\\" = \\"x\\"" -->quoted<!--# endif -->|' +
    '<!--# if expr="$arg_q = \\/a" -->slash<!--# endif -->|' +
    '<!--# if expr="" -->empty<!--# else -->not empty<!--# endif -->|',
  "nested.html": '<!--# if expr="" --><!--# if expr="1" -->inner' +
    "<!--# endif -->after<!--# endif -->|" +
    '<!--# if expr="1" --><!--# if expr="1" -->x<!--# endif -->y<!--# endif -->|' +
    '<!--# else -->|<!--# endif -->|<!--# elif expr="1" -->|' +
    '<!--# if expr="" --><!--# bogus --><!--# echo var="uri" -->' +
    '<!--# if expr="1 -->hidden<!--# endif -->|',
  "errors.html": "<!--# bogus -->|<!--# echo -->|" +
    '<!--# echo var="a" var="b" -->|<!--# echo nope="x" -->|' +
    '<!--# echo var="uri" a="1" b="2" c="3" d="4" e="5" f="6" g="7" h="8" ' +
    'i="9" j="10" k="11" l="12" m="13" n="14" o="15" p="16" -->|' +
    `<!--# ${"c".repeat(33)} -->|<!--# echo ${"k".repeat(33)}="x" -->|` +
    `<!--# echo var="${"v".repeat(256)}" -->|<!--# echo var="${
      "v".repeat(255)
    }" -->|` +
    "<!--# echo var- -->|<!--# echo var x -->|<!--# echo var=x -->|" +
    '<!--# echo var="uri"x -->|<!--# echo -x -->|<!--# echo --x -->|' +
    '<!--# echo var="uri" --x -->|<!--# if expr="$a ~ b" -->|' +
    '<!--# if expr="$uri = /(/" -->|<!--# set var="x" -->|' +
    '<!--#echo var="uri"-- >|<!--# -->|<!--#-->|' +
    '<!--# include -->|<!--# include virtual="/a" file="/b" -->|' +
    '<!--# include file="/a" wait="yes" -->|' +
    '<!--# include virtual="/a" wait="maybe" -->|' +
    '<!--# include virtual="/a" set="x" stub="y" -->|end',
  "config.html": '<!--# config errmsg="[oops]" --><!--# bogus -->|' +
    '<!--# config timefmt="%Y" --><!--# if expr="$date_gmt = /^2\\d\\d\\d$/" -->year' +
    "<!--# endif -->|" +
    '<!--# config timefmt="%s" --><!--# if expr="$date_local = /^\\d+$/" -->epoch' +
    "<!--# endif -->|",
  "block.html":
    '<!--# block name="one" -->hidden <!--# echo var="uri" --> text<!--# endblock -->' +
    "after|<!--# endblock -->|",
  "partial.html": 'a<!-b<!x<<!--#echo var="uri"--><!--x<!--<!--#  ' +
    'echo  var = "uri"  -->|<!- -<!--# echo var="uri" -->< <!--',
  "open.html": 'text<!--# echo var="uri" ',
  "inc.html": '[<!--# include virtual="plain.html" -->]' +
    '[<!--# include file="/echo.html?q=two" -->]' +
    '[<!--# include virtual="/p/plain.html" -->]' +
    '[<!--# include virtual="/missing.html" -->]' +
    '[<!--# include virtual="../x" -->][<!--# include virtual="/dir" -->]' +
    '[<!--# include virtual="/self.html" -->]' +
    '[<!--# include virtual="/p/set.html" wait="yes" -->]' +
    '[<!--# include virtual="/%70lain.html?a=%41" -->]' +
    '[<!--# include virtual="/np/echo.html?q=np" -->]',
  "set_inc.html": '[<!--# include virtual="/plain.html" set="v" -->' +
    '<!--# echo var="v" -->][<!--# include virtual="/p/plain.html" set="W" -->' +
    '<!--# echo var="w" -->][<!--# include virtual="/missing.html" set="m" -->' +
    '<!--# echo var="m" -->][<!--# include virtual="/echo.html" set="e" ' +
    'wait="yes" --><!--# echo var="e" encoding="none" -->]',
  "self.html": 'self<!--# include virtual="/self.html" -->',
  // The main request's variables and captures are its includes' too.
  "share.html": '<!--# set var="title" value="Home" -->' +
    '<!--# if expr="$uri = /(sh)are/" --><!--# endif -->' +
    '[<!--# include virtual="/share_inc.html" wait="yes" -->]' +
    '[<!--# echo var="back" -->]',
  "share_inc.html": '<!--# echo var="title" -->|<!--# echo var="1" -->' +
    '<!--# set var="back" value="B" -->',
  // A block shown in place of an include that fails or is empty.
  "stub.html": '<!--# block name="one" -->[stub one <!--# echo var="uri" -->]' +
    '<!--# endblock --><!--# block name="two" --><!--# endblock -->' +
    '1<!--# include virtual="/missing.html" stub="one" -->|' +
    '2<!--# include virtual="/empty.html" stub="one" -->|' +
    '3<!--# include virtual="/plain.html" stub="one" -->|' +
    '4<!--# include virtual="/p/missing.html" stub="one" -->|' +
    '5<!--# include virtual="/missing.html" stub="two" -->|' +
    '6<!--# include virtual="/missing.html" stub="none" -->|' +
    '7<!--# include virtual="/dir" stub="one" -->|' +
    '8<!--# include file="/empty.html" stub="one" wait="yes" -->|' +
    '9<!--# include virtual="/ret/stub" stub="one" -->|' +
    '<!--# block name="one" -->[one again]<!--# endblock -->' +
    'A<!--# include virtual="/missing.html" stub="one" -->|' +
    'B<!--# include virtual="/p/empty.html" stub="one" -->|',
  "chars.html": "<!--#\techo\r\nvar=\"uri\"\n-->|<!--# echo var='uri' -->|" +
    '<!--# echo var="u\\ri" -->|',
};
