// The station client's calls, as the interface spec shows them: two POSTs
// under /api/ from a page served at the gateway's root, and a WebSocket.
document.getElementById("route").textContent = location.pathname;
async function post(path, body, id) {
  try {
    const res = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    document.getElementById(id).textContent = `${res.status} ${await res
      .text()}`;
  } catch (error) {
    document.getElementById(id).textContent = `failed ${error}`;
  }
}
(async () => {
  await post("/api/loginms", { user: "demo", password: "x" }, "login");
  await post("/api/Home31/UpDateTitle", { title: "Station 7" }, "title");
  // wss:// from an https:// page: a browser blocks ws:// there.
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/api/hub`);
  ws.onopen = () => ws.send("ping-from-browser");
  ws.onmessage = (e) => {
    document.getElementById("ws").textContent = e.data;
    ws.close(1000);
  };
  ws.onerror = () => {
    document.getElementById("ws").textContent = "error";
  };
})();
