/* The tokenizer playground: the reader's text in r50k_base, cl100k_base and o200k_base,
   with tiktoken's IDs, and BPE merging one chunk step by step. It runs in the browser
   and loads nothing but files of this site.

   The encoder mirrors toklab's ByteBPE.encode_ordinary (src/toklab/bpe/model.py): cut
   the text with the vocabulary's pre-tokenizer pattern, then inside each chunk merge
   the adjacent pair whose concatenation has the lowest rank, leftmost on ties, until no
   adjacent pair is a token. Special-token strings are plain text, as in tiktoken's
   encode_ordinary. The data (rank tables, Unicode classes) is written into
   _static/playground/ at build time by src/toklab/playground.py, as scripts rather than
   JSON because browsers refuse fetch() from file://. tests/site/test_playground.py
   compares the IDs with toklab's and tiktoken's. */
(function () {
  "use strict";

  // The data files sit in playground/ beside this script (whose URL may end in ?v=…).
  const DATA_URL = (document.currentScript ? document.currentScript.src : "").replace(/[^/]*$/, "") + "playground/";
  const NAMES = ["r50k_base", "cl100k_base", "o200k_base"];
  // toklab.viz's token tints, in its order, so the chips look like the chapters' figures.
  const COLORS = ["#dbeafe", "#fde68a", "#bbf7d0", "#fecaca", "#e9d5ff", "#fed7aa"];
  const VISIBLE = { " ": "␣", "\n": "↵", "\t": "→", "\r": "␍" };
  const MAX_CHIPS = 2000;   // per row: a pasted book would otherwise build 10^5 elements
  const MAX_CHUNKS = 300;   // chunk buttons in "watch BPE"
  const MAX_WATCH = 1024;   // bytes: longer chunks are encoded but not shown merge by merge

  // ------------------------------------------------------------------ patterns
  // toklab.pre_tokenizers.patterns.PATTERNS, in JavaScript's syntax. JavaScript has no
  // possessive quantifiers; here none is needed, because nothing after a possessive run
  // could match what backtracking would give back (\p{L}++ is followed by no letter, and
  // \s++$ fails the same way whether or not \s+ retries shorter). (?i:…) is spelled out:
  // its only letter with a third case form is s (ſ, U+017F, folds to s in regex and
  // tiktoken). `compile` then replaces \p{…}, \s and \S by code point ranges from the
  // regex module (see toklab.playground), so the browser's own Unicode tables play no part.
  const TAIL = String.raw`'(?:[sStTmMdDſ]|[rR][eE]|[vV][eE]|[lL][lL])`;
  const PATTERNS = {
    gpt2: String.raw`'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+$|\s+(?!\S)|\s`,
    cl100k: String.raw`'(?:[sdmtSDMTſ]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}` +
      String.raw`| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`,
    o200k: [
      String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:${TAIL})?`,
      String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:${TAIL})?`,
      String.raw`\p{N}{1,3}`,
      String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
      String.raw`\s*[\r\n]+`,
      String.raw`\s+(?!\S)`,
      String.raw`\s+`,
    ].join("|"),
  };

  // "gap,width,…" in base 36 (toklab.playground) -> "\u{41}-\u{5a}\u{61}-\u{7a}…".
  function ranges(code) {
    let out = "", end = -1;
    const numbers = code.split(",").map(s => parseInt(s, 36));
    for (let k = 0; k < numbers.length; k += 2) {
      const first = end + 1 + numbers[k];
      end = first + numbers[k + 1];
      out += `\\u{${first.toString(16)}}` + (end > first ? `-\\u{${end.toString(16)}}` : "");
    }
    return out;
  }

  // A pattern with every \p{X}, \s and \S replaced by its ranges: bare inside [...],
  // bracketed outside.
  function compile(source, classes) {
    let out = "", inClass = false;
    for (let i = 0; i < source.length; i++) {
      const c = source[i];
      let set = null, negate = false;
      if (c === "\\") {
        const m = /^\\(?:p\{(\w+)\}|(s)|(S))/.exec(source.slice(i));
        if (m) {
          set = classes[m[1] || "White_Space"];
          negate = Boolean(m[3]);
          if (negate && inClass) throw new Error("\\S inside a class");
          i += m[0].length - 1;
          out += inClass ? set : `[${negate ? "^" : ""}${set}]`;
        } else {
          out += source.slice(i, i + 2);
          i++;
        }
        continue;
      }
      if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      out += c;
    }
    return new RegExp(out, "gu");
  }

  // ------------------------------------------------------------------ bytes and labels
  // A token is a "byte string": one JavaScript character (0-255) per byte, so it can key a Map.
  const utf8 = new TextEncoder();
  function byteString(text) {
    const bytes = utf8.encode(text);
    let s = "";
    for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return s;
  }

  // Lone surrogates have no UTF-8 form: U+FFFD, as tiktoken and toklab do before splitting.
  const wellFormed = text => text.toWellFormed ? text.toWellFormed() : text.replace(/\p{Cs}/gu, "\uFFFD");

  // toklab.viz.token_label: whole UTF-8 as text with visible whitespace, else hex bytes.
  // ignoreBOM keeps a token that is U+FEFF (the decoder would otherwise drop it).
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  function tokenLabel(token) {
    const bytes = Uint8Array.from(token, c => c.charCodeAt(0));
    try {
      return strict.decode(bytes).replace(/[ \n\t\r]/g, c => VISIBLE[c]);
    } catch (e) {
      return "<" + Array.from(bytes, b => b.toString(16).toUpperCase().padStart(2, "0")).join(" ") + ">";
    }
  }

  // ------------------------------------------------------------------ BPE
  const NONE = Infinity;
  // Like toklab.bpe.encode.SHORT: below this many bytes the quadratic scan, from it the heap.
  const SHORT = 24;

  // toklab.bpe.encode.merge_short: the rank of every adjacent pair in a list; each merge
  // looks up only the two pairs it changes. onMerge(i, rank, parts) sees each step first.
  function mergeShort(piece, ranks, onMerge) {
    const n = piece.length;
    if (n < 2) return n ? [piece] : [];
    const cuts = Array.from({ length: n + 1 }, (_, i) => i);
    const rank = (a, b) => { const r = ranks.get(piece.slice(cuts[a], cuts[b])); return r === undefined ? NONE : r; };
    const parts = () => cuts.slice(0, -1).map((c, k) => piece.slice(c, cuts[k + 1]));
    const pair = [];
    for (let i = 0; i < n - 1; i++) pair.push(rank(i, i + 2));
    while (pair.length) {
      let i = -1, best = NONE;
      for (let k = 0; k < pair.length; k++) if (pair[k] < best) { best = pair[k]; i = k; }
      if (i < 0) break;
      if (onMerge) onMerge(i, best, parts());
      cuts.splice(i + 1, 1);
      pair.splice(i, 1);
      if (i < pair.length) pair[i] = rank(i, i + 2);
      if (i) pair[i - 1] = rank(i - 1, i + 1);
    }
    return parts();
  }

  // toklab.bpe.encode.merge_long: a linked list of parts and a heap of candidate merges.
  // An entry is rank * 2^32 + position (ties go to the leftmost); a stale one, whose parts
  // have changed since, is recognised by its rank no longer matching.
  function mergeLong(piece, ranks) {
    const n = piece.length, parts = Array.from(piece);
    const next = parts.map((_, i) => i + 1), prev = parts.map((_, i) => i - 1);
    const heap = new Heap();
    const offer = (i, token) => { const r = ranks.get(token); if (r !== undefined) heap.push(r * 4294967296 + i); };
    for (let i = 0; i < n - 1; i++) offer(i, parts[i] + parts[i + 1]);
    while (heap.size) {
      const key = heap.pop(), r = Math.floor(key / 4294967296), i = key % 4294967296;
      const j = next[i];
      if (parts[i] === null || j >= n || ranks.get(parts[i] + parts[j]) !== r) continue;
      const merged = parts[i] + parts[j];
      parts[i] = merged;
      parts[j] = null;
      const k = next[j];
      next[i] = k;
      if (k < n) { prev[k] = i; offer(i, merged + parts[k]); }
      if (prev[i] >= 0) offer(prev[i], parts[prev[i]] + merged);
    }
    return parts.filter(p => p !== null);
  }

  class Heap {  // a binary min-heap of numbers
    constructor() { this.a = []; }
    get size() { return this.a.length; }
    push(x) {
      const a = this.a;
      let i = a.push(x) - 1;
      while (i > 0) { const p = (i - 1) >> 1; if (a[p] <= x) break; a[i] = a[p]; i = p; }
      a[i] = x;
    }
    pop() {
      const a = this.a, top = a[0], last = a.pop();
      if (a.length) {
        let i = 0;
        for (;;) {
          let c = 2 * i + 1;
          if (c >= a.length) break;
          if (c + 1 < a.length && a[c + 1] < a[c]) c++;
          if (a[c] >= last) break;
          a[i] = a[c]; i = c;
        }
        a[i] = last;
      }
      return top;
    }
  }

  // ByteBPE's model stage on one chunk: a chunk that is a token is that token (tiktoken's
  // order), otherwise the merges' parts.
  function segment(vocab, chunk) {
    const bytes = byteString(chunk);
    const whole = vocab.ranks.get(bytes);
    if (whole !== undefined) return [whole];
    const parts = bytes.length < SHORT ? mergeShort(bytes, vocab.ranks) : mergeLong(bytes, vocab.ranks);
    return parts.map(p => vocab.ranks.get(p));
  }

  // ByteBPE.encode_ordinary, keeping the chunks: {chunks, ids, perChunk}.
  function encodeOrdinary(vocab, text) {
    const chunks = wellFormed(text).match(vocab.regex) || [];
    if (vocab.cache.size > 100000) vocab.cache.clear();
    const ids = [], perChunk = [];
    for (const chunk of chunks) {
      let got = vocab.cache.get(chunk);
      if (!got) { got = segment(vocab, chunk); vocab.cache.set(chunk, got); }
      perChunk.push(got);
      for (const id of got) ids.push(id);
    }
    return { chunks, ids, perChunk };
  }

  // Every merge BPE makes on one chunk, in order: [{parts before, i, rank}], and the end.
  function watchMerges(vocab, chunk) {
    const steps = [];
    const end = mergeShort(byteString(chunk), vocab.ranks, (i, rank, parts) => steps.push({ parts, i, rank }));
    return { steps, end };
  }

  // ------------------------------------------------------------------ data
  const loading = {};
  function loadData(key) {
    if (!loading[key]) {
      loading[key] = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = DATA_URL + key + ".js";
        script.onload = () => {
          const data = (window.toklabPlaygroundData || {})[key];
          if (data) resolve(data); else reject(new Error(`${script.src} holds no ${key}`));
        };
        script.onerror = () => reject(new Error(`could not load ${script.src}`));
        document.head.appendChild(script);
      });
    }
    return loading[key];
  }

  let classes = null;
  const loadClasses = () => classes || (classes = loadData("unicode").then(unicode => Object.fromEntries(
    Object.entries(unicode.classes).map(([k, code]) => [k, ranges(code)]))));

  const vocabs = {};
  function loadVocab(name) {
    if (!vocabs[name]) {
      vocabs[name] = Promise.all([loadClasses(), loadData(name)]).then(([classes, data]) => {
        const lengths = atob(data.lengths), blob = atob(data.bytes);
        const ranks = new Map(), tokens = [];
        for (let rank = 0, at = 0; rank < lengths.length; rank++) {
          const n = lengths.charCodeAt(rank);
          if (!n) continue;
          const token = blob.slice(at, at += n);
          ranks.set(token, rank);
          tokens[rank] = token;
        }
        return { name, ranks, tokens, pattern: data.pattern, regex: compile(PATTERNS[data.pattern], classes),
                 cache: new Map() };
      });
    }
    return vocabs[name];
  }

  // ------------------------------------------------------------------ the page
  let serial = 0;
  const el = (tag, attrs = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "text") e.textContent = v; else if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    e.append(...children);
    return e;
  };
  const number = n => n.toLocaleString("en-US");

  function chip(token, id, k, tag = "span") {
    const c = el(tag, { class: "tp-chip" }, el("span", { class: "tp-label", text: tokenLabel(token) }));
    if (id !== undefined) {
      c.append(el("span", { class: "tp-id", text: String(id) }));
      c.title = `ID ${id}`;
    }
    c.style.background = COLORS[k % COLORS.length];
    return c;
  }

  function build(box) {
    const id = `tp${++serial}`, page = box.dataset.size === "page";
    const text = el("textarea", { id: `${id}-text`, rows: page ? "4" : "2", spellcheck: "false",
                                  autocomplete: "off", autocapitalize: "off" });
    text.value = box.dataset.text || "";
    const showIds = el("input", { type: "checkbox", id: `${id}-ids` });
    const sizes = el("span", { class: "tp-sizes" });
    const rows = {};
    const rowList = el("div", { class: "tp-rows" });
    for (const name of NAMES) {
      const stats = el("span", { class: "tp-stats", text: "loading…" });
      const chips = el("div", { class: "tp-chips" });
      rows[name] = { stats, chips };
      rowList.append(el("div", { class: "tp-row", role: "group", "aria-labelledby": `${id}-${name}` },
        el("div", { class: "tp-head" }, el("span", { class: "tp-name", id: `${id}-${name}`, text: name }), " ", stats),
        chips));
    }
    const select = el("select", { id: `${id}-vocab` }, ...NAMES.map(n => el("option", { value: n, text: n })));
    select.value = NAMES.includes(box.dataset.watch) ? box.dataset.watch : "cl100k_base";
    const chunkNote = el("p", { class: "tp-note" });
    const chunkList = el("div", { class: "tp-chunks", role: "group", "aria-label": "Pre-tokenizer chunks" });
    const stepNote = el("p", { class: "tp-note" });
    const nav = {};
    const navBar = el("div", { class: "tp-nav" });
    for (const [key, label, name] of [["first", "⏮ First", "First step"], ["back", "◀ Back", "Back one step"],
                                      ["next", "Next ▶", "Next step"], ["last", "Last ⏭", "Last step"]]) {
      nav[key] = el("button", { type: "button", "aria-label": name, text: label });
      navBar.append(nav[key]);
    }
    const stepText = el("p", { class: "tp-step", "aria-live": "polite" });
    const parts = el("div", { class: "tp-chips tp-parts" });
    const merges = el("ol", { class: "tp-merges" });
    const watch = el("details", { class: "tp-watch" },
      el("summary", { text: "Watch BPE merge one chunk, step by step" }),
      el("div", { class: "tp-watch-body" },
        el("p", { class: "tp-field" }, el("label", { for: `${id}-vocab`, text: "Vocabulary" }), select),
        chunkNote, chunkList, stepNote, navBar, stepText, parts, merges));
    watch.open = page;
    box.replaceChildren(
      el("p", { class: "tp-field" }, el("label", { for: `${id}-text`, text: "Text to tokenize" })),
      text,
      el("p", { class: "tp-options" }, el("span", {}, showIds, el("label", { for: `${id}-ids`, text: "Show token IDs" })),
        sizes),
      rowList,
      el("p", { class: "tp-note", text: "Special-token strings such as <|endoftext|> are encoded as plain text, " +
        "as tiktoken's encode_ordinary does." }),
      watch);

    // "watch BPE": which chunk, and how many merges into it the reader is.
    const state = { chunk: box.dataset.chunk || null, step: 0, steps: null };

    function renderRow(name, vocab, input) {
      const { ids } = encodeOrdinary(vocab, input);
      const row = rows[name];
      const bytes = utf8.encode(wellFormed(input)).length, chars = [...input].length;
      const per = n => ids.length ? (n / ids.length).toFixed(2) : "–";
      row.stats.textContent = `${number(ids.length)} tokens · ${per(bytes)} bytes and ${per(chars)} characters per token`;
      const shown = ids.slice(0, MAX_CHIPS).map((tid, k) => chip(vocab.tokens[tid], tid, k));
      if (ids.length > MAX_CHIPS) shown.push(el("span", { class: "tp-more", text: `… ${number(ids.length - MAX_CHIPS)} more` }));
      row.chips.replaceChildren(...shown);
      sizes.textContent = `${number(bytes)} bytes, ${number(chars)} characters`;
    }

    function renderWatch(vocab, input) {
      const { chunks, perChunk } = encodeOrdinary(vocab, input);
      const longest = chunks.slice(0, MAX_CHUNKS).reduce((best, c, k) => c.length > chunks[best].length ? k : best, 0);
      if (!chunks.includes(state.chunk)) state.chunk = chunks.length ? chunks[longest] : null;
      chunkNote.textContent = `1. The ${vocab.pattern} pattern cuts the text into ${number(chunks.length)} chunks, ` +
        "and BPE never merges across them. Pick one:";
      const buttons = chunks.slice(0, MAX_CHUNKS).map((c, k) => {
        const b = chip(byteString(c), undefined, k, "button");
        b.type = "button";
        b.setAttribute("aria-pressed", String(c === state.chunk));
        b.setAttribute("aria-label", `chunk ${k + 1}: ${tokenLabel(byteString(c))}, ${perChunk[k].length} tokens`);
        b.addEventListener("click", () => { state.chunk = c; state.step = 0; state.steps = null; update(); });
        return b;
      });
      if (chunks.length > MAX_CHUNKS) buttons.push(el("span", { class: "tp-more", text: `… ${number(chunks.length - MAX_CHUNKS)} more` }));
      chunkList.replaceChildren(...buttons);
      renderSteps(vocab);
    }

    function renderSteps(vocab) {
      const chunk = state.chunk;
      const all = [nav.first, nav.back, nav.next, nav.last];
      if (chunk === null || byteString(chunk).length > MAX_WATCH) {
        stepNote.textContent = chunk === null ? "" : `2. This chunk has more than ${MAX_WATCH} bytes: pick a shorter one.`;
        all.forEach(b => { b.disabled = true; });
        stepText.textContent = "";
        parts.replaceChildren();
        merges.replaceChildren();
        return;
      }
      if (!state.steps) state.steps = watchMerges(vocab, chunk);
      const { steps, end } = state.steps, m = steps.length;
      state.step = Math.min(state.step, m);
      const k = state.step, now = k < m ? steps[k].parts : end;
      const bytes = byteString(chunk);
      stepNote.textContent = `2. BPE on the ${bytes.length} bytes of ${tokenLabel(bytes)}: ${m} merges, in the order BPE makes them.`;
      const pair = s => `${tokenLabel(s.parts[s.i])} + ${tokenLabel(s.parts[s.i + 1])} → ` +
        `${tokenLabel(s.parts[s.i] + s.parts[s.i + 1])} (rank ${number(s.rank)})`;
      let said = k === 0 ? `Start: ${bytes.length} bytes, each a token of its own.` : `Step ${k} of ${m}: ${pair(steps[k - 1])}.`;
      said += k < m ? ` Next: ${pair(steps[k])}, the lowest-ranked adjacent pair.`
        : ` No adjacent pair is a token: ${end.length} token${end.length === 1 ? "" : "s"}.`;
      const direct = vocab.ranks.get(bytes);
      if (k === m && direct !== undefined) said += ` (The whole chunk is token ${direct}, which tiktoken looks up first.)`;
      stepText.textContent = said;
      parts.replaceChildren(...now.map((p, j) => {
        const c = chip(p, vocab.ranks.get(p), j);
        if (k < m && (j === steps[k].i || j === steps[k].i + 1)) c.classList.add("tp-next");
        return c;
      }));
      merges.replaceChildren(...steps.map((s, j) => {
        const li = el("li", { text: pair(s) });
        if (j < k) li.className = "tp-done";
        if (j === k) li.setAttribute("aria-current", "step");
        return li;
      }));
      nav.first.disabled = nav.back.disabled = k === 0;
      nav.next.disabled = nav.last.disabled = k === m;
    }

    const go = to => () => { state.step = to(state.step); update(false); };
    nav.first.addEventListener("click", go(() => 0));
    nav.back.addEventListener("click", go(k => Math.max(0, k - 1)));
    nav.next.addEventListener("click", go(k => k + 1));
    nav.last.addEventListener("click", go(() => Infinity));

    // Each change re-encodes on the next frame; data-state is "done" once every row
    // shows the current text (the site tests wait for it).
    let pending = false, needAll = false, generation = 0;
    function update(all = true) {
      box.dataset.state = "busy";
      needAll = needAll || all;
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        const input = text.value, now = ++generation, whole = needAll;
        pending = needAll = false;
        let left = NAMES.length;
        for (const name of NAMES) {
          loadVocab(name).then(vocab => {
            if (now !== generation) return;
            if (whole) renderRow(name, vocab, input);
            if (name === select.value) (whole ? renderWatch : renderSteps)(vocab, input);
            if (!window.toklabPlayground.firstTokens) {
              window.toklabPlayground.firstTokens = performance.now();
              performance.mark("toklab-playground-first-tokens");
            }
            if (--left === 0) box.dataset.state = "done";
          }, err => { rows[name].stats.textContent = `could not load ${name}: ${err.message}`; throw err; });
        }
      });
    }
    text.addEventListener("input", () => { state.steps = null; state.step = 0; update(); });
    select.addEventListener("change", () => { state.steps = null; state.step = 0; update(); });
    showIds.addEventListener("change", () => box.classList.toggle("tp-show-ids", showIds.checked));
    update();
  }

  // For the site tests and the curious: the encoder without the page.
  window.toklabPlayground = {
    load: loadVocab,
    encodeOrdinary: (name, text) => loadVocab(name).then(v => {
      const { chunks, ids } = encodeOrdinary(v, text);
      return { chunks, ids };
    }),
    watchMerges: (name, chunk) => loadVocab(name).then(v => watchMerges(v, chunk)),
    tokenLabel,
    firstTokens: null,
  };

  // This script is only on pages with a playground, so the data can start loading now,
  // while the page is still being parsed: smallest first, so the first row comes soonest.
  NAMES.reduce((previous, name) => previous.then(() => loadVocab(name)), loadClasses()).catch(() => {});
  const start = () => document.querySelectorAll(".toklab-playground").forEach(build);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
