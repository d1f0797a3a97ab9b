// ReqStudio: a download button in the header on a thread's page, for the thread as Markdown
// (GET /reqstudio/export/<thread id>, answered to the thread's author only). The page is a
// single-page app: the button follows its address as it changes.
(function () {
  const zh = (navigator.language || "").toLowerCase().startsWith("zh");
  const label = zh ? "导出 Markdown" : "Export Markdown";
  function place() {
    const match = window.location.pathname.match(/\/thread\/([0-9a-f-]+)/);
    let button = document.getElementById("reqstudio-export");
    if (!match) {
      if (button) button.remove();
      return;
    }
    const href = "/reqstudio/export/" + match[1];
    if (button) {
      if (button.getAttribute("href") !== href) button.setAttribute("href", href);
      return;
    }
    if (!document.getElementById("header")) return;
    button = document.createElement("a");
    button.id = "reqstudio-export";
    button.href = href;
    button.setAttribute("download", "");
    button.title = label;
    button.textContent = "⤓ " + label;
    button.className = "reqstudio-export";
    document.body.appendChild(button); // outside React's tree: placed over the header by CSS
  }
  new MutationObserver(place).observe(document.documentElement, { childList: true, subtree: true });
  window.addEventListener("popstate", place);
  place();
})();
