// A small, safe markdown renderer for the model's answers.
//
// Safety rule: every piece of text is HTML-escaped *before* any markup is added, and the
// only tags in the output are the ones written below. Links keep only http(s) and mailto
// targets and open with rel="noopener noreferrer". A streaming answer may end inside a
// code fence: the open fence is drawn as code up to the end.
"use strict";

(function () {
  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  }

  // Placeholders for inline code and links, so emphasis never reaches inside them. The
  // private-use characters cannot come from escaped text in a way that matters: any that
  // do are removed first.
  const HOLD_OPEN = "\uE000";
  const HOLD_CLOSE = "\uE001";

  function safeUrl(escapedUrl) {
    // The URL is already escaped (&amp; etc.), which is right inside an attribute.
    const raw = escapedUrl.replace(/&amp;/g, "&").trim();
    if (/^(https?:\/\/|mailto:)/i.test(raw)) return escapedUrl.trim();
    return null;
  }

  function inline(text) {
    const held = [];
    const hold = (html) => {
      held.push(html);
      return HOLD_OPEN + (held.length - 1) + HOLD_CLOSE;
    };
    let s = escapeHtml(String(text).replace(/[\uE000\uE001]/g, ""));
    // Inline code: `x` or ``x`` (contents stay literal).
    s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, _ticks, code) =>
      hold(`<code>${code.trim() === "" ? code : code.replace(/^ (.*) $/, "$1")}</code>`),
    );
    // Links: [label](url); a URL we do not allow stays as plain text.
    s = s.replace(/\[([^\]\n]+)\]\(([^()\s]+)\)/g, (whole, label, url) => {
      const href = safeUrl(url);
      if (href === null) return whole;
      return hold(
        `<a href="${href}" target="_blank" rel="noopener noreferrer">${emphasis(label)}</a>`,
      );
    });
    // Bare URLs become links too.
    // (A placeholder never ends up inside a URL.)
    s = s.replace(/(^|[\s(])(https?:\/\/[^\s<>()\uE000\uE001]+[^\s<>().,;:!?'"\uE000\uE001])/g, (_, before, url) =>
      before + hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>`),
    );
    s = emphasis(s);
    return s.replace(new RegExp(HOLD_OPEN + "(\\d+)" + HOLD_CLOSE, "g"), (_, i) => held[+i]);
  }

  function emphasis(s) {
    return s
      .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>")
      .replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/g, "$1<em>$2</em>")
      .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, "$1<em>$2</em>")
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");
  }

  // A fence and its info string; a backtick fence's info holds no backtick (CommonMark),
  // so "```x `y`" is text, not a fence.
  const FENCE = /^ {0,3}(?:(`{3,})([^`]*)|(~{3,})(.*))$/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
  const QUOTE = /^ {0,3}>\s?(.*)$/;
  const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|")) row = row.slice(0, -1);
    return row.split("|").map((cell) => cell.trim());
  }

  function render(source) {
    const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
    const out = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      const fence = FENCE.exec(line);
      if (fence) {
        const marker = fence[1] || fence[3];
        const info = (fence[2] ?? fence[4] ?? "").trim();
        const lang = info.split(/\s+/)[0].replace(/[^\w+#.-]/g, "");
        const body = [];
        i += 1;
        // Only a bare fence of the same kind, at least as long, closes it.
        const closing = new RegExp(`^ {0,3}${marker[0]}{${marker.length},}\\s*$`);
        while (i < lines.length && !closing.test(lines[i])) {
          body.push(lines[i]);
          i += 1;
        }
        i += 1; // the closing fence (or past the end while it streams)
        const cls = lang ? ` class="lang-${escapeHtml(lang)}"` : "";
        const label = info ? `<span class="code-lang">${escapeHtml(info)}</span>` : "";
        out.push(`<pre class="code">${label}<code${cls}>${escapeHtml(body.join("\n"))}</code></pre>`);
        continue;
      }
      if (line.trim() === "") {
        i += 1;
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        const level = heading[1].length;
        out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
        i += 1;
        continue;
      }
      if (RULE.test(line)) {
        out.push("<hr>");
        i += 1;
        continue;
      }
      if (QUOTE.test(line)) {
        const body = [];
        while (i < lines.length && QUOTE.test(lines[i])) {
          body.push(QUOTE.exec(lines[i])[1]);
          i += 1;
        }
        out.push(`<blockquote>${render(body.join("\n"))}</blockquote>`);
        continue;
      }
      if (LIST_ITEM.test(line)) {
        i = renderList(lines, i, out);
        continue;
      }
      if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
        const head = splitRow(line);
        const rows = [];
        i += 2;
        while (i < lines.length && lines[i].includes("|") && lines[i].trim() !== "") {
          rows.push(splitRow(lines[i]));
          i += 1;
        }
        const th = head.map((c) => `<th>${inline(c)}</th>`).join("");
        const trs = rows
          .map((r) => `<tr>${head.map((_, k) => `<td>${inline(r[k] ?? "")}</td>`).join("")}</tr>`)
          .join("");
        out.push(`<div class="table-wrap"><table><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table></div>`);
        continue;
      }
      // A paragraph: lines up to a blank line or the start of another block.
      const para = [];
      while (
        i < lines.length &&
        lines[i].trim() !== "" &&
        !FENCE.test(lines[i]) &&
        !HEADING.test(lines[i]) &&
        !QUOTE.test(lines[i]) &&
        !LIST_ITEM.test(lines[i]) &&
        !(para.length > 0 && RULE.test(lines[i]))
      ) {
        para.push(lines[i]);
        i += 1;
      }
      out.push(`<p>${para.map(inline).join("<br>")}</p>`);
    }
    return out.join("\n");
  }

  // A list and the lists nested in it (deeper indentation), with lazy continuation lines.
  function renderList(lines, start, out) {
    const stack = []; // {indent, tag}
    let i = start;
    let openItem = false;
    const close = (depth) => {
      while (stack.length > depth) {
        out.push("</li>");
        out.push(`</${stack.pop().tag}>`);
      }
    };
    while (i < lines.length) {
      const line = lines[i];
      const item = LIST_ITEM.exec(line);
      if (!item) {
        if (line.trim() === "") {
          // A blank line ends the list unless the next line continues it.
          const next = lines[i + 1];
          if (next !== undefined && (LIST_ITEM.test(next) || /^\s{2,}\S/.test(next))) {
            i += 1;
            continue;
          }
          break;
        }
        if (/^\s+\S/.test(line) && openItem && !FENCE.test(line)) {
          out.push(`<br>${inline(line.trim())}`);
          i += 1;
          continue;
        }
        break;
      }
      const indent = item[1].replace(/\t/g, "    ").length;
      const tag = /\d/.test(item[2]) ? "ol" : "ul";
      while (stack.length > 0 && indent < stack[stack.length - 1].indent) {
        out.push("</li>");
        out.push(`</${stack.pop().tag}>`);
      }
      const top = stack[stack.length - 1];
      if (top === undefined || indent > top.indent) {
        const first = tag === "ol" ? parseInt(item[2], 10) : 1;
        out.push(tag === "ol" && first !== 1 ? `<ol start="${first}">` : `<${tag}>`);
        stack.push({ indent, tag });
      } else {
        out.push("</li>");
      }
      let text = item[3];
      let checkbox = "";
      const task = /^\[([ xX])\]\s+(.*)$/.exec(text);
      if (task) {
        checkbox = task[1] === " " ? '<span class="task">☐</span> ' : '<span class="task done">☑</span> ';
        text = task[2];
      }
      out.push(`<li>${checkbox}${inline(text)}`);
      openItem = true;
      i += 1;
    }
    close(0);
    return i;
  }

  window.InkMarkdown = { render, inline, escapeHtml };
})();
