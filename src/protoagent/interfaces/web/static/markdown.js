// A small Markdown renderer for agent text: paragraphs, headings, lists, quotes, fenced code,
// inline code, bold, italics and http(s) links. The text is HTML-escaped before anything else,
// so the only tags in the result are the ones made here; nothing the model writes becomes markup.
"use strict";

const MD_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text) { return text.replace(/[&<>"']/g, (c) => MD_ESCAPES[c]); }

function mdInline(escaped) {
  const codes = [];
  let s = escaped.replace(/`([^`\n]+)`/g, (_, code) => { codes.push(code); return `\u0000${codes.length - 1}\u0000`; });
  s = s.replace(/\*\*([^*\n]+?)\*\*/g, "<strong>$1</strong>");
  s = s.replace(/(^|[^*\w])\*([^*\s][^*\n]*?)\*(?![*\w])/g, "$1<em>$2</em>");
  s = s.replace(/(^|[^_\w])_([^_\s][^_\n]*?)_(?![_\w])/g, "$1<em>$2</em>");
  s = s.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s()]+)\)/g,
    '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${codes[Number(i)]}</code>`);
}

const MD_BLOCKS = [
  { kind: "ul", test: /^\s*[-*+]\s+(.*)$/ },
  { kind: "ol", test: /^\s*\d+[.)]\s+(.*)$/ },
  { kind: "quote", test: /^\s*&gt;\s?(.*)$/ },
];

function markdownHtml(text) {
  const lines = escapeHtml(text.replace(/\u0000/g, "")).split("\n");
  const out = [];
  let para = [];
  let list = null;
  const flushPara = () => { if (para.length) out.push(`<p>${para.map(mdInline).join("<br>")}</p>`); para = []; };
  const flushList = () => {
    if (!list) return;
    const tag = list.kind === "quote" ? "blockquote" : list.kind;
    const items = list.kind === "quote" ? list.items.map(mdInline).join("<br>") : list.items.map((i) => `<li>${mdInline(i)}</li>`).join("");
    out.push(`<${tag}>${items}</${tag}>`);
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*```\s*([\w+.-]*)\s*$/);
    if (fence) {
      flushPara(); flushList();
      const body = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i]);
      const lang = fence[1] ? ` data-lang="${fence[1]}"` : "";
      out.push(`<pre class="code"${lang}><code>${body.join("\n")}</code></pre>`);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flushPara(); flushList();
      const level = Math.min(6, heading[1].length + 2);
      out.push(`<h${level}>${mdInline(heading[2])}</h${level}>`);
      continue;
    }
    const block = MD_BLOCKS.map((b) => ({ kind: b.kind, found: line.match(b.test) })).find((b) => b.found);
    if (block) {
      flushPara();
      if (!list || list.kind !== block.kind) { flushList(); list = { kind: block.kind, items: [] }; }
      list.items.push(block.found[1]);
      continue;
    }
    if (!line.trim()) { flushPara(); flushList(); continue; }
    flushList();
    para.push(line);
  }
  flushPara(); flushList();
  return out.join("");
}

function renderMarkdown(text) {
  const node = document.createElement("div");
  node.className = "md";
  node.innerHTML = markdownHtml(text);
  return node;
}
