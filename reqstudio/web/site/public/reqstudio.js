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
      align(button);
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
    align(button);
  }
  // Beside the header's own buttons (Readme, theme, user), a gap to their left and on their
  // middle line, wherever the window's width and the language put them: at a fixed offset
  // "Export Markdown" touched "Readme" in English.
  function align(button) {
    const readme = document.getElementById("readme-button");
    const group = readme && readme.parentElement;
    if (!group) return;
    const box = group.getBoundingClientRect();
    const right = Math.max(0, Math.round(window.innerWidth - box.left + 12)) + "px";
    const top = Math.round(box.top + (box.height - button.offsetHeight) / 2) + "px";
    if (button.style.right !== right) button.style.right = right;
    if (button.style.top !== top) button.style.top = top;
  }
  new MutationObserver(place).observe(document.documentElement, { childList: true, subtree: true });
  window.addEventListener("popstate", place);
  window.addEventListener("resize", place);
  place();
})();

// ReqStudio: a starter clicked while files are attached in the composer. Chainlit's starter
// sends its text alone: the files stay in the composer and go with the next message, in
// whatever chat comes next. Here the starter's text is put in the composer and sent from
// there, so it leaves with the attached files, as if the user had typed it.
(function () {
  let starters = null; // label -> message, every mode's, both languages
  async function load() {
    const found = new Map();
    for (const language of ["en-US", "zh-CN"]) {
      const response = await fetch("/project/settings?language=" + language, {
        credentials: "same-origin",
      });
      if (!response.ok) continue;
      const settings = await response.json();
      const lists = [settings.starters || []];
      for (const profile of settings.chatProfiles || []) lists.push(profile.starters || []);
      for (const list of lists) for (const s of list) found.set(s.label.trim(), s.message);
    }
    return found;
  }
  function typeInto(textarea, text) {
    const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
    setter.call(textarea, text);
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  }
  document.addEventListener(
    "click",
    async function (event) {
      const button = event.target.closest && event.target.closest("#starters button");
      if (!button || !document.getElementById("attachments")) return;
      const input = document.getElementById("chat-input");
      if (!input) return;
      event.preventDefault();
      event.stopPropagation();
      if (starters === null) starters = await load();
      const message = starters.get(button.textContent.trim());
      if (message === undefined) return; // unknown starter: do nothing rather than guess
      typeInto(input, message);
      // React renders the new value, then the send button sends it with the files
      requestAnimationFrame(() => {
        const send = document.getElementById("chat-submit");
        if (send && !send.disabled) send.click();
      });
    },
    true,
  );
})();

// ReqStudio: what Chainlit 2 draws that a user of another chat app expects otherwise.
// - A long message of the user's (a pasted 200 KB document) folds to a few lines, with
//   "展开全文 / Show all" to open it and "收起 / Collapse" to fold it again (Chainlit 1's
//   `default_collapse_content` is gone from Chainlit 2). The labels are CSS `::after` content
//   taken from data attributes: nothing is added to React's tree.
// - A code block without a language is headed "Raw code", in English whatever the page's
//   language (hard-coded in Chainlit's bundle, no translation key): in Chinese it reads "代码".
// - Chainlit's MCP dialog (the plug button in the composer) and its toasts are hard-coded in
//   English (no translation keys): in Chinese they read in Chinese. A diff block's header
//   ("diff", the code's language) reads "修改对比".
// - A file over Chainlit's own upload gate (far above the app's limit, which refuses in the
//   user's language) gets Chainlit's English toast "File is larger than N MB", and a file of a
//   type it does not take "File type must be ...": both said in Chinese.
(function () {
  const zh = (navigator.language || "").toLowerCase().startsWith("zh");
  const FOLD_ABOVE_PX = 480; // taller than this folds (the folded height is in reqstudio.css)
  const USER_TEXT = '.step[data-step-type="user_message"] .message-content';
  const MCP_ZH = {
    "MCP Servers": "MCP 服务器",
    "Connect an MCP": "连接 MCP",
    "My MCPs": "我的 MCP",
    "Available Servers": "可用的服务器",
    "Connect Your Own Server": "连接自己的服务器",
    "Connect": "连接",
    "Name *": "名称 *",
    "Example: My MCP Server": "例如：我的 MCP 服务器",
    "Type": "类型",
    "Type *": "类型 *",
    "Server URL *": "服务器地址 *",
    "URL": "地址",
    "HTTP URL": "HTTP 地址",
    "Server (stdio)": "本机服务器（stdio）",
    "Headers (JSON, optional)": "请求头（JSON，可选）",
    "Authorization": "授权",
    "Tools": "工具",
    "Are you sure?": "确定吗？",
    "No MCP servers connected": "还没有连接 MCP 服务器",
    "Add your first MCP server": "添加第一个 MCP 服务器",
    "No MCP servers are configured. Ask your administrator to add servers to the Chainlit config.":
      "没有配置 MCP 服务器。请管理员在 Chainlit 配置中添加。",
    "Connecting MCP...": "正在连接 MCP…",
    "MCP connected!": "MCP 已连接！",
    "Could not connect to the MCP server": "无法连接 MCP 服务器",
    "Adding MCP...": "正在添加 MCP…",
    "MCP added!": "MCP 已添加！",
    "Removing MCP...": "正在移除 MCP…",
    "MCP removed!": "MCP 已移除！",
    "Reconnecting MCP...": "正在重新连接 MCP…",
    "MCP reconnected!": "MCP 已重新连接！",
    "Headers must be valid JSON": "请求头必须是有效的 JSON",
    "Close": "关闭",
  };

  function translate(root, table) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const said = table[node.textContent.trim()];
      if (said !== undefined) node.textContent = said;
    }
    for (const field of root.querySelectorAll("input[placeholder], textarea[placeholder]")) {
      const said = table[field.getAttribute("placeholder")];
      if (said !== undefined) field.setAttribute("placeholder", said);
    }
  }
  let scheduled = false;

  function tidy() {
    scheduled = false;
    for (const content of document.querySelectorAll(USER_TEXT)) {
      if (content.hasAttribute("data-reqstudio-fold")) continue;
      if (content.scrollHeight <= FOLD_ABOVE_PX) continue;
      content.setAttribute("data-reqstudio-more", zh ? "展开全文 ▾" : "Show all ▾");
      content.setAttribute("data-reqstudio-less", zh ? "收起 ▴" : "Collapse ▴");
      content.setAttribute("data-reqstudio-fold", "folded");
    }
    if (zh) {
      for (const label of document.querySelectorAll("span.text-sm.text-muted-foreground")) {
        if (label.textContent === "Raw code") label.textContent = "代码";
        if (label.textContent === "diff") label.textContent = "修改对比";
      }
      for (const dialog of document.querySelectorAll("[role=dialog], [data-sonner-toast]")) {
        translate(dialog, MCP_ZH);
      }
      // Chainlit's upload gate (set far above the app's own limit) refuses in English only
      for (const title of document.querySelectorAll("[data-sonner-toast] [data-title]")) {
        const found = /^File is larger than ([\d.]+) MB$/.exec(title.textContent.trim());
        if (found) title.textContent = "文件大于 " + found[1] + " MB，无法上传。";
        const type = /^File type must be (.+)$/.exec(title.textContent.trim());
        if (type) title.textContent = "不支持此文件类型。可上传的类型：" + type[1];
      }
    }
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    window.requestAnimationFrame(tidy);
  }

  document.addEventListener(
    "click",
    function (event) {
      const content = event.target.closest && event.target.closest("[data-reqstudio-fold]");
      if (!content) return;
      if (content.getAttribute("data-reqstudio-fold") === "folded") {
        content.setAttribute("data-reqstudio-fold", "open");
        event.preventDefault();
      } else if (event.clientY > content.getBoundingClientRect().bottom - 32) {
        content.setAttribute("data-reqstudio-fold", "folded"); // the "Collapse" line
        content.scrollIntoView({ block: "nearest" });
      }
    },
    true
  );
  new MutationObserver(schedule).observe(document.documentElement, {
    childList: true,
    subtree: true,
    characterData: true,
  });
  schedule();
})();
