// cedar web page: small vanilla script, no framework, nothing loaded from elsewhere.
// Every call goes to /web/api/... (forwarded to /api/v1 with the session's token, which this
// script never sees); state-changing calls carry the CSRF token from the page's <meta>.
"use strict";
(function () {
  const CSRF = document.querySelector('meta[name="csrf-token"]').content;
  const STATUS = {1: "Idle", 2: "Running", 3: "Removed", 4: "Completed", 5: "Held", 6: "Transferring", 7: "Suspended"};
  const $ = (sel, root) => (root || document).querySelector(sel);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  async function api(path, options) {
    options = options || {};
    const headers = Object.assign({}, options.headers || {});
    const method = options.method || "GET";
    if (method !== "GET") headers["X-CSRF-Token"] = CSRF;
    let body = options.body;
    if (options.json !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(options.json); }
    const answer = await fetch(path, {method, headers, body, credentials: "same-origin"});
    const type = answer.headers.get("content-type") || "";
    const data = type.includes("json") ? await answer.json() : await answer.text();
    if (answer.status === 401 && path.startsWith("/web/")) {
      // the session ended or the pool no longer accepts the token: sign in again
      window.location.href = "/signin";
    }
    if (!answer.ok) {
      const message = (data && data.error) || (typeof data === "string" ? data : answer.statusText);
      const err = new Error(message); err.status = answer.status; throw err;
    }
    return data;
  }

  function notice(text, isError) {
    const box = $("#notice");
    box.textContent = text;
    box.className = isError ? "error" : "ok";
  }

  // Times in the viewer's own time zone (the browser's).
  function when(epoch) {
    if (typeof epoch !== "number" || !epoch) return "";
    return new Date(epoch * 1000).toLocaleString();
  }
  function timeEl(epoch) {
    return epoch ? el("time", {datetime: new Date(epoch * 1000).toISOString(), text: when(epoch)}) : "";
  }
  // A value as people read it: expressions without the JSON mapping's /Expr(...)/ wrapper.
  function show(value) {
    if (typeof value === "string") { const m = /^\/Expr\((.*)\)\/$/s.exec(value); return m ? m[1] : value; }
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  function statusName(code) { return STATUS[code] || String(code); }
  function badge(code, attrs) { const name = statusName(code); return el("span", Object.assign({class: "badge", "data-status": name, text: name}, attrs || {})); }

  // The theme: the system's unless the reader picked one (kept in this browser only).
  const THEMES = ["system", "light", "dark"];
  function applyTheme(name) {
    if (name === "system") document.documentElement.removeAttribute("data-theme");
    else document.documentElement.setAttribute("data-theme", name);
    const button = $("#theme");
    if (button) button.textContent = "Theme: " + name;
  }
  function initTheme() {
    let current = "system";
    try { current = localStorage.getItem("cedar-theme") || "system"; } catch (err) { /* storage off */ }
    if (!THEMES.includes(current)) current = "system";
    applyTheme(current);
    const button = $("#theme");
    if (button) button.addEventListener("click", () => {
      current = THEMES[(THEMES.indexOf(current) + 1) % THEMES.length];
      try { localStorage.setItem("cedar-theme", current); } catch (err) { /* storage off */ }
      applyTheme(current);
    });
  }

  // Values in units people read: sizes (the ad's KiB or MiB) and durations (seconds).
  function size(kib) {
    if (typeof kib !== "number") return show(kib);
    const units = ["KB", "MB", "GB", "TB"]; let v = kib, i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (v >= 10 || i === 0 ? Math.round(v) : v.toFixed(1)) + " " + units[i];
  }
  function duration(seconds) {
    if (typeof seconds !== "number" || !isFinite(seconds)) return show(seconds);
    seconds = Math.max(0, Math.round(seconds));
    const d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600), m = Math.floor(seconds % 3600 / 60), s = seconds % 60;
    const two = n => String(n).padStart(2, "0");
    return (d ? d + "+" : "") + two(h) + ":" + two(m) + ":" + two(s);
  }
  // A batch's progress bar: a segment per state, and the counts in words.
  function progress(counts, total) {
    const parts = [["idle", 1, "idle"], ["running", 2, "running"], ["held", 5, "held"], ["done", 4, "done"]];
    const bar = el("div", {class: "progress", "aria-hidden": "true"});
    const words = [];
    for (const [cls, code, word] of parts) {
      const n = counts[code] || 0;
      if (!n) continue;
      const seg = el("span", {class: cls, title: `${n} ${word}`});
      seg.style.width = (100 * n / Math.max(total, 1)) + "%";
      bar.append(seg); words.push(`${n} ${word}`);
    }
    return [bar, el("div", {class: "progress-words", "data-progress": words.join(", "), text: words.join(" · ") || "no jobs"})];
  }
  function jobId(ad) { return ad.ClusterId + "." + ad.ProcId; }
  // The job's arguments as a list: ``Arguments`` (whitespace separates, '...' groups, '' is a
  // quote inside a group) or the old ``Args`` (whitespace only).
  function argList(ad) {
    if (typeof ad.Arguments !== "string") return String(ad.Args || "").split(/\s+/).filter(Boolean);
    const out = []; let cur = null, quoted = false; const text = ad.Arguments;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (ch === "'") {
        if (quoted && text[i + 1] === "'") { cur += "'"; i++; }
        else { quoted = !quoted; if (cur === null) cur = ""; }
      } else if (!quoted && /\s/.test(ch)) { if (cur !== null) { out.push(cur); cur = null; } }
      else cur = (cur || "") + ch;
    }
    if (cur !== null) out.push(cur);
    return out;
  }
  function shortCmd(ad) {
    const cmd = String(ad.Cmd || "").split("/").pop();
    const args = argList(ad).map(a => (a === "" || /[\s'"]/.test(a)) ? "'" + a.replace(/'/g, "'\\''") + "'" : a);
    return [cmd, ...args].join(" ").trim();
  }

  // ------------------------------------------------------------------ batches
  const expanded = new Set();
  async function act(what, target, reason) {
    // target: {job: "C.P"} or {constraint: "..."}
    try {
      let result;
      if (target.job && what === "remove") result = await api("/web/api/jobs/" + target.job, {method: "DELETE"});
      else if (target.job) result = await api("/web/api/jobs/" + target.job + "/" + what, {method: "POST", json: {reason}});
      else result = await api("/web/api/jobs/" + what, {method: "POST", json: {constraint: target.constraint, reason}});
      const n = (result.results || []).length;
      notice(`${what}: ${result.succeeded === false ? "not all done" : "done"}${n ? " (" + n + " job" + (n > 1 ? "s" : "") + ")" : ""}.`, result.succeeded === false);
    } catch (err) { notice(`${what} failed: ${err.message}`, true); }
    refreshBatches();
  }

  function actionButtons(label, target, statuses) {
    const box = el("div", {class: "buttons"});
    const can = {hold: statuses.some(s => s === 1 || s === 2), release: statuses.includes(5), remove: statuses.some(s => s !== 3)};
    for (const what of ["hold", "release", "remove"]) {
      if (!can[what]) continue;
      box.append(el("button", {type: "button", "data-action": what, "aria-label": `${what} ${label}`,
        onclick: () => act(what, target, `via the web page`)}, what[0].toUpperCase() + what.slice(1)));
    }
    return box;
  }

  // The jobs last listed, by id: the event stream patches their status in place, so a change
  // is shown without listing the queue again (a job the page has not seen yet is listed).
  let known = new Map(), listed = false;
  async function refreshBatches() {
    try {
      const answer = await api("/web/api/jobs?limit=0&projection=ClusterId,ProcId,JobStatus,JobBatchName,QDate,Cmd,Args,Arguments,HoldReason");
      known = new Map(answer.jobs.map(ad => [jobId(ad), ad])); listed = true;
    } catch (err) { notice("Could not load your jobs: " + err.message, true); return; }
    drawBatches();
  }

  // Live updates: the server-sent events of /web/api/jobs/events (the API's stream, scoped by
  // the session's token). When the stream fails the browser retries it; meanwhile, and only
  // then, the page lists the queue every 30 s.
  let fallback = null, relist = null;
  function relistSoon() {  // one listing for a burst of new jobs
    if (!relist) relist = setTimeout(() => { relist = null; refreshBatches(); }, 300);
  }
  function onJobEvent(ev) {
    let data;
    try { data = JSON.parse(ev.data); } catch (err) { return; }
    const ad = known.get(data.job_id);
    if (ev.type === "left") { if (ad) { known.delete(data.job_id); drawBatches(); } return; }
    if (!ad) { if (listed) relistSoon(); return; }  // (before the first listing: it has it)
    if (ad.JobStatus === data.status) return;
    ad.JobStatus = data.status;
    delete ad.HoldReason;
    drawBatches();
    if (data.status === 5 && document.querySelector(`tr.job[data-job="${data.job_id}"]`)) holdReason(data.job_id);
  }
  async function holdReason(id) {  // the reason of a hold shown in an open batch
    try {
      const ad = await api(`/web/api/jobs/${id}?projection=ClusterId,ProcId,JobStatus,HoldReason`);
      const mine = known.get(id);
      if (mine && mine.JobStatus === ad.JobStatus) { mine.HoldReason = ad.HoldReason; drawBatches(); }
    } catch (err) { /* shown on the next listing */ }
  }
  function subscribe() {
    const stream = new EventSource("/web/api/jobs/events");
    stream.addEventListener("status", onJobEvent);
    stream.addEventListener("left", onJobEvent);
    stream.addEventListener("open", () => {
      $("#live").textContent = "live";
      // (a reconnection sends Last-Event-ID: the server replays what was missed)
      if (fallback) { clearInterval(fallback); fallback = null; }
    });
    stream.addEventListener("error", () => {
      $("#live").textContent = "reconnecting (checked every 30 s meanwhile)";
      if (!fallback) fallback = setInterval(refreshBatches, 30000);
      if (stream.readyState === EventSource.CLOSED) setTimeout(subscribe, 30000);
    });
  }

  function drawBatches() {
    const body = $("#batches tbody");
    const jobs = [...known.values()];
    const groups = new Map();
    for (const ad of jobs) {
      const key = ad.JobBatchName ? "name:" + ad.JobBatchName : "cluster:" + ad.ClusterId;
      if (!groups.has(key)) groups.set(key, {key, name: ad.JobBatchName || ("Cluster " + ad.ClusterId), jobs: [], clusters: new Set()});
      const g = groups.get(key); g.jobs.push(ad); g.clusters.add(ad.ClusterId);
    }
    const rows = [];
    const sorted = [...groups.values()].sort((a, b) => Math.max(...b.clusters) - Math.max(...a.clusters));
    for (const g of sorted) {
      const counts = {1: 0, 2: 0, 5: 0, 4: 0, 3: 0};
      for (const ad of g.jobs) counts[ad.JobStatus] = (counts[ad.JobStatus] || 0) + 1;
      const first = g.jobs[0];
      const open = expanded.has(g.key);
      const constraint = [...g.clusters].sort().map(c => "ClusterId == " + c).join(" || ");
      const toggle = el("button", {type: "button", class: "link", "aria-expanded": open ? "true" : "false",
        "data-batch": g.name, onclick: () => { open ? expanded.delete(g.key) : expanded.add(g.key); drawBatches(); }},
        (open ? "▾ " : "▸ ") + g.name + ` (${g.jobs.length} job${g.jobs.length > 1 ? "s" : ""})`);
      const qdate = Math.min(...g.jobs.map(a => a.QDate || Infinity));
      rows.push(el("tr", {class: "batch", "data-batch": g.name},
        el("th", {scope: "row"}, toggle, ...progress(counts, g.jobs.length)), el("td", {}, timeEl(isFinite(qdate) ? qdate : 0)),
        el("td", {}, el("code", {text: shortCmd(first)})),
        ...[1, 2, 5, 4, 3].map(s => el("td", {class: "count", "data-status": statusName(s), text: String(counts[s] || 0)})),
        el("td", {}, actionButtons("batch " + g.name, {constraint}, g.jobs.map(a => a.JobStatus)))));
      if (open) {
        for (const ad of g.jobs.sort((a, b) => a.ClusterId - b.ClusterId || a.ProcId - b.ProcId)) {
          const id = jobId(ad);
          rows.push(el("tr", {class: "job", "data-job": id},
            el("td", {}, el("a", {href: "/job/" + id, text: "Job " + id})),
            el("td", {colspan: "2"}, badge(ad.JobStatus), ad.HoldReason ? " — " + ad.HoldReason : ""),
            el("td", {colspan: "5", text: shortCmd(ad)}),
            el("td", {}, actionButtons("job " + id, {job: id}, [ad.JobStatus]))));
        }
      }
    }
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", {colspan: "9", text: "No batches in the queue. Finished jobs are in the Archive."}))]));
    $("#updated").textContent = new Date().toLocaleTimeString();
  }

  // ------------------------------------------------------------------ submit
  const TEMPLATES = {
    sleep: "executable = /bin/sleep\ntransfer_executable = false\narguments = $(seconds)\nrequest_cpus = 1\nrequest_memory = 64MB\n",
    echo: "executable = /bin/echo\ntransfer_executable = false\narguments = $(message)\noutput = echo-$(Process).out\nerror = echo-$(Process).err\nrequest_memory = 64MB\n",
    script: "# attach the script (run.sh) under Input files\nexecutable = run.sh\narguments = $(args)\noutput = run-$(Process).out\nerror = run-$(Process).err\nrequest_memory = 128MB\n",
    container: "universe = container\ncontainer_image = $(image)\nexecutable = /bin/echo\ntransfer_executable = false\narguments = $(message)\noutput = container-$(Process).out\nerror = container-$(Process).err\nrequest_memory = 256MB\n",
    custom: "executable = /bin/sh\ntransfer_executable = false\narguments = \"-c 'echo $(word)'\"\noutput = out-$(Process).txt\nerror = err-$(Process).txt\n",
  };
  // Macros the submit language defines itself; not table columns.
  const BUILTIN = new Set(["cluster", "clusterid", "process", "procid", "item", "itemindex", "row", "step", "node", "submit_file", "submit_time", "year", "month", "day"]);
  let columns = [];

  function placeholders(text) {
    const found = [];
    const re = /\$\(([A-Za-z_][A-Za-z0-9_.]*)\)/g;
    let m;
    while ((m = re.exec(text))) {
      const name = m[1];
      if (!BUILTIN.has(name.toLowerCase()) && !found.some(f => f.toLowerCase() === name.toLowerCase()) && !/^\$\(\$/.test(m[0])) found.push(name);
    }
    return found;
  }

  function currentRows() {
    return [...document.querySelectorAll("#rows tbody tr")].map(tr => [...tr.querySelectorAll("input")].map(i => i.value));
  }

  function renderTable(rows) {
    const head = el("tr", {}, el("th", {scope: "col", text: "#"}), ...columns.map(c => el("th", {scope: "col", text: c})), el("th", {scope: "col", text: "Remove"}));
    $("#rows thead").replaceChildren(head);
    const body = rows.map((row, i) => el("tr", {},
      el("th", {scope: "row", text: String(i)}),
      ...columns.map((c, j) => el("td", {}, el("input", {type: "text", value: row[j] || "", "aria-label": `${c}, job ${i}`, name: `cell-${i}-${j}`}))),
      el("td", {}, el("button", {type: "button", "aria-label": `remove job ${i}`, onclick: (ev) => { ev.target.closest("tr").remove(); renderTable(currentRows()); }}, "✕"))));
    $("#rows tbody").replaceChildren(...body);
    $("#columns-help").textContent = columns.length
      ? `Columns from the description's placeholders: ${columns.join(", ")}.`
      : "The description has no placeholders: each row is one more copy of the job.";
  }

  function syncColumns() {
    const text = $("#description").value;
    const next = placeholders(text);
    if (next.join("\0") === columns.join("\0")) return;
    const old = columns, rows = currentRows();
    columns = next;
    renderTable(rows.map(r => columns.map(c => { const k = old.indexOf(c); return k >= 0 ? r[k] : ""; })));
  }

  function parseCsv(text) {
    const rows = []; let row = [], field = "", quoted = false;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (quoted) {
        if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
        else if (ch === '"') quoted = false;
        else field += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === ",") { row.push(field); field = ""; }
      else if (ch === "\n" || ch === "\r") {
        if (ch === "\r" && text[i + 1] === "\n") i++;
        row.push(field); field = "";
        if (row.some(f => f.trim() !== "")) rows.push(row);
        row = [];
      } else field += ch;
    }
    row.push(field);
    if (row.some(f => f.trim() !== "")) rows.push(row);
    return rows;
  }

  async function loadCsv() {
    let text = $("#csv-text").value;
    const file = $("#csv-file").files[0];
    if (!text.trim() && file) text = await file.text();
    const rows = parseCsv(text);
    if (rows.length < 1) { notice("The CSV is empty.", true); return; }
    const header = rows[0].map(h => h.trim());
    const missing = columns.filter(c => !header.some(h => h.toLowerCase() === c.toLowerCase()));
    if (missing.length) { notice("The CSV has no column for: " + missing.join(", "), true); return; }
    const index = columns.map(c => header.findIndex(h => h.toLowerCase() === c.toLowerCase()));
    renderTable(rows.slice(1).map(r => index.map(k => (r[k] || "").trim())));
    notice(`Filled ${rows.length - 1} row(s) from the CSV.`, false);
  }

  function inputFiles() { return [...$("#input-files").files].concat(dropped); }
  let dropped = [];

  // The description sent: the template, the batch name, the input files and one queue ... from.
  function composed() {
    const rows = currentRows();
    let text = $("#description").value.replace(/^\s*queue\b.*$/gim, "").trimEnd() + "\n";
    const name = $("#batch-name").value.trim();
    if (name) text += `batch_name = ${name}\n`;
    const files = inputFiles();
    if (files.length) {
      const names = files.map(f => f.name);
      if (/^\s*transfer_input_files\s*=/im.test(text)) text = text.replace(/^(\s*transfer_input_files\s*=\s*)(.*)$/im, (m, a, b) => a + [b.trim(), ...names].filter(Boolean).join(", "));
      else text += `transfer_input_files = ${names.join(", ")}\n`;
      if (!/^\s*should_transfer_files\s*=/im.test(text)) text += "should_transfer_files = YES\n";
      // Spooled output stays until the batch is removed (or 10 days), not only until the first
      // download: a page lets people fetch files one at a time.
      if (!/^\s*leave_in_queue\s*=/im.test(text)) text += "leave_in_queue = JobStatus == 4 && (time() - (CompletionDate ?: time())) < 864000\n";
    }
    const errors = [];
    if (!rows.length) errors.push("Add at least one row (one row per job).");
    if (columns.length) {
      rows.forEach((r, i) => r.forEach((v, j) => {
        if (j < columns.length - 1 && /[,\s]/.test(v)) errors.push(`Job ${i}, ${columns[j]}: only the last column may contain commas or spaces.`);
        if (/[\r\n()]/.test(v)) errors.push(`Job ${i}, ${columns[j]}: no line breaks or parentheses.`);
        if (v === "") errors.push(`Job ${i}, ${columns[j]}: empty.`);
      }));
      text += `queue ${columns.join(", ")} from (\n${rows.map(r => r.join(", ")).join("\n")}\n)\n`;
    } else text += `queue ${rows.length}\n`;
    return {text, errors, files};
  }

  function showErrors(list) {
    $("#preview-errors").replaceChildren(...(list.length ? [el("ul", {class: "error"}, ...list.map(e => el("li", {text: e})))] : []));
  }

  async function preview() {
    const {text, errors, files} = composed();
    showErrors(errors);
    $("#preview-out").replaceChildren(el("pre", {class: "description", text}));
    if (errors.length) return false;
    let result;
    try { result = await api("/web/preview", {method: "POST", json: {submit_file: text, spool: files.length > 0}}); }
    catch (err) { showErrors([err.message]); return false; }
    if (result.error) { showErrors([result.error]); return false; }
    const out = [el("p", {text: `${result.count} job(s).`})];
    for (const w of result.warnings || []) out.push(el("p", {class: "warning", text: "Warning: " + w}));
    result.jobs.forEach((ad, i) => {
      const names = Object.keys(ad).sort((a, b) => a.localeCompare(b));
      out.push(el("details", {}, el("summary", {text: `Job ${i}: ${ad.Cmd || ""} ${ad.Args || ad.Arguments || ""}`}),
        el("pre", {text: names.map(k => `${k} = ${ad[k]}`).join("\n")})));
    });
    $("#preview-out").append(...out);
    return true;
  }

  async function submit(ev) {
    ev.preventDefault();
    const button = $("#submit");
    button.disabled = true;
    try {
      if (!(await preview())) { notice("Fix the errors shown under Preview.", true); return; }
      const {text, files} = composed();
      const result = await api("/web/api/jobs", {method: "POST", json: {submit_file: text, spool: files.length > 0}});
      if (files.length) {
        for (const id of result.job_ids) {
          const form = new FormData();
          for (const f of files) form.append("files", f, f.name);
          await api(`/web/api/jobs/${id}/input/multipart`, {method: "POST", body: form});
        }
      }
      notice(`Submitted cluster ${result.cluster_id}: ${result.job_ids.length} job(s).`, false);
      window.location.href = "/?submitted=" + result.cluster_id;
    } catch (err) {
      showErrors([err.message]);
      notice("Submitting failed: " + err.message, true);
    } finally { button.disabled = false; }
  }

  function initSubmit() {
    const pick = () => { $("#description").value = TEMPLATES[$("#template").value]; syncColumns(); if (!currentRows().length) renderTable([columns.map(() => "")]); };
    $("#template").addEventListener("change", pick);
    $("#description").addEventListener("input", syncColumns);
    $("#add-row").addEventListener("click", () => renderTable(currentRows().concat([columns.map(() => "")])));
    $("#make-copies").addEventListener("click", () => {
      const n = Math.max(1, Math.min(10000, parseInt($("#copies").value, 10) || 1));
      const first = currentRows()[0] || columns.map(() => "");
      renderTable(Array.from({length: n}, () => first.slice()));
    });
    $("#load-csv").addEventListener("click", loadCsv);
    $("#preview").addEventListener("click", preview);
    $("#submit-form").addEventListener("submit", submit);
    const zone = $("#drop-zone");
    zone.addEventListener("dragover", ev => { ev.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", ev => {
      ev.preventDefault(); zone.classList.remove("over");
      dropped = dropped.concat([...ev.dataTransfer.files]);
      zone.textContent = "Dropped: " + dropped.map(f => f.name).join(", ");
    });
    pick();
  }

  // ------------------------------------------------------------------ job
  const IMPORTANT = ["Owner", "JobBatchName", "Cmd", "Arguments", "Args", "Iwd", "QDate", "JobStartDate", "EnteredCurrentStatus",
    "CompletionDate", "ExitCode", "HoldReason", "RemoveReason", "RequestCpus", "RequestMemory", "RequestDisk", "RemoteHost",
    "LastRemoteHost", "NumJobStarts", "RemoteWallClockTime", "TransferInput", "TransferOutput", "Out", "Err"];
  const TIMES = new Set(["QDate", "JobStartDate", "EnteredCurrentStatus", "CompletionDate"]);
  const SIZES_KIB = new Set(["RequestDisk", "DiskUsage", "ImageSize"]);
  const SIZES_MIB = new Set(["RequestMemory", "MemoryUsage"]);
  const DURATIONS = new Set(["RemoteWallClockTime", "RemoteUserCpu", "RemoteSysCpu", "CumulativeSlotTime"]);
  // An attribute as people read it: times in the viewer's zone, sizes and durations in units;
  // the wall-clock time of a running job counts on from the start of its current run.
  // An expression is shown as its value in the job's ad (the server evaluates it: one rule,
  // cedar's evaluator), with the expression itself as the cell's title.
  function isExpression(value) { return typeof value === "string" && /^\/Expr\(.*\)\/$/s.test(value); }
  async function evaluatedOf(id, ad, names) {
    const wanted = names.filter(n => isExpression(ad[n]));
    if (!wanted.length) return {};
    try { return await api(`/web/api/jobs/${id}/evaluated?attrs=${wanted.join(",")}`); }
    catch (err) { return {}; }  // shown as written
  }
  function shownValue(name, ad, evaluated) {
    let value = ad[name];
    if (isExpression(value) && evaluated && evaluated[name] !== undefined && evaluated[name] !== null) value = evaluated[name];
    if (TIMES.has(name)) return timeEl(value);
    if (SIZES_KIB.has(name) && typeof value === "number") return size(value);
    if (SIZES_MIB.has(name) && typeof value === "number") return size(value * 1024);
    if (name === "RemoteWallClockTime" && ad.JobStatus === 2 && typeof ad.JobCurrentStartDate === "number") {
      const before = typeof value === "number" ? value : 0;
      const span = el("span", {"data-live-since": String(ad.JobCurrentStartDate), "data-before": String(before)});
      span.textContent = duration(before + Date.now() / 1000 - ad.JobCurrentStartDate);
      return span;
    }
    if (DURATIONS.has(name) && typeof value === "number") return duration(value);
    return show(value);
  }
  setInterval(() => {  // run times tick every second
    for (const span of document.querySelectorAll("[data-live-since]")) {
      span.textContent = duration(Number(span.dataset.before) + Date.now() / 1000 - Number(span.dataset.liveSince));
    }
  }, 1000);
  let filesShown = null;
  let jobAd = null, fromHistory = false, offsets = {stdout: -1, stderr: -1};

  async function loadJob(id) {
    try { jobAd = await api("/web/api/jobs/" + id); fromHistory = false; }
    catch (err) {
      if (err.status !== 404) throw err;
      const [c, p] = id.split(".");
      const found = await api(`/web/api/jobs/archive?limit=1&constraint=${encodeURIComponent(`ClusterId == ${c} && ProcId == ${p}`)}`);
      if (!found.jobs.length) throw err;
      jobAd = found.jobs[0]; fromHistory = true;
    }
    return jobAd;
  }

  function outputNames(ad) {
    const names = new Set();
    for (const attr of ["SpooledOutputFiles", "TransferOutput"]) {
      if (typeof ad[attr] === "string") ad[attr].split(",").map(s => s.trim().split("/").pop()).filter(Boolean).forEach(n => names.add(n));
    }
    for (const attr of ["Out", "Err"]) if (typeof ad[attr] === "string" && ad[attr] && ad[attr] !== "/dev/null") names.add(ad[attr].split("/").pop());
    return [...names];
  }

  async function renderJob(id) {
    let ad;
    try { ad = await loadJob(id); } catch (err) { $("#status-line").textContent = "Cannot load this job: " + err.message; return; }
    const status = statusName(ad.JobStatus);
    $("#status-line").replaceChildren(el("strong", {id: "job-status", class: "badge", "data-status": status, text: status}),
      fromHistory ? " (from the archive)" : "", ad.HoldReason ? " — " + ad.HoldReason : "");
    $("#job-actions").replaceChildren(fromHistory ? "" : actionButtonsJob(id, ad.JobStatus));
    const items = [];
    const evaluated = await evaluatedOf(id, ad, IMPORTANT);
    for (const name of IMPORTANT) {
      if (ad[name] === undefined || ad[name] === null) continue;
      const number = typeof ad[name] === "number" ? ad[name] : (typeof evaluated[name] === "number" ? evaluated[name] : null);
      items.push(el("dt", {text: name}), el("dd", {"data-attr": name, "data-value": number === null ? null : String(number),
        title: isExpression(ad[name]) ? show(ad[name]) : null}, shownValue(name, ad, evaluated)));
    }
    $("#important").replaceChildren(...items);
    const full = $("#full-ad");
    full.textContent = Object.keys(ad).sort((a, b) => a.localeCompare(b)).map(k => `${k} = ${JSON.stringify(ad[k])}`).join("\n");
    const names = fromHistory ? [] : outputNames(ad);
    $("#tar-link").hidden = fromHistory;
    if (fromHistory) $("#files").replaceChildren(el("li", {text: "This job has left the queue; its output sandbox left with it."}));
    if (!fromHistory && names.join("\0") !== filesShown) {  // redrawn only when it changes (links stay put)
      filesShown = names.join("\0");
      $("#files").replaceChildren(...names.map(n => el("li", {}, el("a", {href: `/web/api/jobs/${id}/files/${encodeURIComponent(n)}`, download: n, "data-file": n, text: n}))));
    }
    renderEvents(id, ad);
    if (ad.JobStatus === 2) liveOutput(id); else $("#live-state").textContent = "The job is not running: live output is shown only while it runs.";
  }

  function actionButtonsJob(id, status) {
    const box = el("div", {class: "buttons"});
    const add = (what, label) => box.append(el("button", {type: "button", "data-action": what, onclick: async () => {
      try {
        if (what === "remove") await api("/web/api/jobs/" + id, {method: "DELETE"});
        else await api(`/web/api/jobs/${id}/${what}`, {method: "POST", json: {reason: "via the web page"}});
        notice(`${label}: done.`, false);
      } catch (err) { notice(`${label} failed: ${err.message}`, true); }
      renderJob(id);
    }}, label));
    if (status === 1 || status === 2) add("hold", "Hold");
    if (status === 5) add("release", "Release");
    if (status !== 3) add("remove", status === 4 ? "Remove from the queue" : "Remove");
    return box;
  }

  // The event log: the job's own log file (``log = ...``, read from its output sandbox) when
  // it has one, else a timeline from its ad and its run records (epochs). Reading the log
  // fetches the sandbox, so it is read when the job's status changes (and on request), not
  // on every refresh of the page.
  let logEvents = null, logReadAt = null, logNote = "";
  async function readLog(id) {
    try {
      const answer = await api(`/web/api/jobs/${id}/events`);
      logEvents = answer.events || []; logNote = "From the job's event log (times are the pool's).";
    } catch (err) {
      logEvents = null;
      logNote = err.status === 404 ? "Timeline from the job's record (" + err.message + ")." : "The event log could not be read: " + err.message;
    }
  }

  async function renderEvents(id, ad, force) {
    if (!fromHistory && (force || logReadAt !== ad.JobStatus)) { logReadAt = ad.JobStatus; await readLog(id); }
    if (logEvents && logEvents.length) {
      $("#events").replaceChildren(...logEvents.map(e => el("li", {"data-event": e.MyType || ""},
        el("span", {class: "muted", text: String(e.EventTime || "").replace("T", " ") + " "}), eventText(e))));
      $("#log-note").textContent = logNote;
      return;
    }
    const events = [];
    const push = (t, text) => { if (t) events.push([t, text]); };
    push(ad.QDate, "Submitted");
    try {
      const [c, p] = id.split(".");
      const epochs = await api(`/web/api/jobs/epochs?limit=50&backwards=false&constraint=${encodeURIComponent(`ClusterId == ${c} && ProcId == ${p}`)}`);
      for (const e of epochs.jobs) {
        if (e.EpochAdType === "SPAWN") push(e.EpochWriteDate || e.ShadowBday, `Run ${e.NumShadowStarts || ""} started`);
        else if (e.EpochAdType === "EPOCH") push(e.EpochWriteDate, `Run ended${e.ExitCode !== undefined ? " (exit code " + e.ExitCode + ")" : ""}${e.VacateReason ? ": " + e.VacateReason : ""}`);
      }
    } catch (err) { /* epochs are optional */ }
    if (!events.some(([, text]) => text.startsWith("Run ")) && ad.JobStatus === 2) push(ad.JobCurrentStartDate || ad.EnteredCurrentStatus, "Running");
    if (ad.JobStatus === 5) push(ad.EnteredCurrentStatus, "Held: " + (ad.HoldReason || ""));
    if (ad.JobStatus === 4) push(ad.CompletionDate || ad.EnteredCurrentStatus, "Completed" + (ad.ExitCode !== undefined ? " with exit code " + ad.ExitCode : ""));
    if (ad.JobStatus === 3) push(ad.EnteredCurrentStatus, "Removed" + (ad.RemoveReason ? ": " + ad.RemoveReason : ""));
    events.sort((a, b) => a[0] - b[0]);
    $("#events").replaceChildren(...events.map(([t, text]) => el("li", {}, timeEl(t), " ", text)));
    $("#log-note").textContent = fromHistory ? "Timeline from the job's record (its event log left with its sandbox)." : logNote;
  }

  const EVENT_WORDS = {SubmitEvent: "Submitted", ExecuteEvent: "Started running", JobTerminatedEvent: "Finished",
    JobHeldEvent: "Held", JobReleasedEvent: "Released", JobReleaseEvent: "Released", JobAbortedEvent: "Removed",
    ShadowExceptionEvent: "Shadow exception", JobEvictedEvent: "Evicted", FileTransferEvent: "File transfer",
    JobImageSizeEvent: "Memory use updated", ImageSizeEvent: "Memory use updated",
    JobDisconnectedEvent: "Disconnected", JobReconnectedEvent: "Reconnected", JobSuspendedEvent: "Suspended",
    JobUnsuspendedEvent: "Resumed"};
  // FileTransferEvent's Type: 1-3 the input files (queued, started, done), 4-6 the output's.
  const TRANSFERS = {1: "Input files: waiting to transfer", 2: "Input files: transfer started", 3: "Input files transferred",
    4: "Output files: waiting to transfer", 5: "Output files: transfer started", 6: "Output files transferred"};
  function eventText(e) {
    let text = EVENT_WORDS[e.MyType] || String(e.MyType || "event");
    if (e.MyType === "FileTransferEvent" && TRANSFERS[e.Type]) text = TRANSFERS[e.Type];
    if (e.MyType === "JobTerminatedEvent") {
      if (e.ReturnValue !== undefined) text += ` with exit code ${e.ReturnValue}`;
      else if (e.TerminatedBySignal !== undefined) text += ` by signal ${e.TerminatedBySignal}`;
    }
    if (e.HoldReason) text += ": " + e.HoldReason;
    else if (e.Reason) text += ": " + e.Reason;
    if (e.SlotName) text += " on " + show(e.SlotName);
    else if (e.ExecuteHost) text += " on " + show(e.ExecuteHost);
    if ((e.MyType === "JobImageSizeEvent" || e.MyType === "ImageSizeEvent") && typeof e.MemoryUsage === "number") text += ": " + size(e.MemoryUsage * 1024);
    return text;
  }

  let liveTimer = null;
  async function liveOutput(id) {
    $("#live-state").textContent = "The job is running; its output appears below.";
    const poll = async () => {
      for (const file of ["stdout", "stderr"]) {
        try {
          const r = await api(`/web/api/jobs/${id}/tail?file=${file}&offset=${offsets[file]}&max_bytes=65536`);
          for (const piece of r.files) { $("#live-" + file).textContent += piece.text; offsets[file] = piece.next_offset; }
        } catch (err) {
          $("#live-state").textContent = "Live output: " + err.message;
          clearInterval(liveTimer); liveTimer = null; return;
        }
      }
    };
    if (!liveTimer) { liveTimer = setInterval(poll, 2000); poll(); }
  }

  async function explain(id) {
    const box = $("#analysis");
    box.replaceChildren(el("p", {text: "Analysing…"}));
    let result;
    try { result = await api(`/web/api/jobs/${id}/analysis`); }
    catch (err) { box.replaceChildren(el("p", {class: "error", text: "No analysis: " + err.message})); return; }
    const parts = [el("p", {id: "explanation", text: result.explanation || "No explanation."})];
    const fixes = [], seen = new Set();
    for (const clause of result.clauses || []) for (const s of clause.suggestions || []) {
      const key = s.attribute + "=" + s.value;
      if (!seen.has(key)) { seen.add(key); fixes.push(s); }
    }
    fixes.sort((a, b) => b.slots - a.slots);
    for (const s of fixes) {
      parts.push(el("p", {}, el("button", {type: "button", class: "fix", "data-attribute": s.attribute, onclick: async () => {
        try {
          await api("/web/api/jobs/" + id, {method: "PATCH", json: {attributes: {[s.attribute]: s.value}}});
          notice(`Changed ${s.attribute} to ${s.value}.`, false);
          await renderJob(id); await explain(id);
        } catch (err) { notice("The fix failed: " + err.message, true); }
      }}, `Fix: set ${s.attribute} to ${s.value}`), " ", el("span", {class: "muted", text: s.text})));
    }
    parts.push(el("button", {type: "button", onclick: () => explain(id)}, "Explain again"));
    box.replaceChildren(...parts);
  }

  function initJob() {
    const id = $("#job").dataset.job;
    $("#show-ad").addEventListener("click", ev => {
      const full = $("#full-ad"); full.hidden = !full.hidden;
      ev.target.setAttribute("aria-expanded", String(!full.hidden));
      ev.target.textContent = full.hidden ? "Show the full ad" : "Hide the full ad";
    });
    $("#analyze").addEventListener("click", () => explain(id));
    $("#read-log").addEventListener("click", async () => { if (jobAd) await renderEvents(id, jobAd, true); });
    renderJob(id);
    setInterval(() => { if (!fromHistory) renderJob(id); }, 5000);
  }

  // ------------------------------------------------------------------ archive
  async function initArchive() {
    const body = $("#archive tbody");
    let answer;
    try { answer = await api("/web/api/jobs/archive?limit=200&projection=ClusterId,ProcId,JobBatchName,JobStatus,QDate,CompletionDate,EnteredCurrentStatus,ExitCode,NumShadowStarts,Cmd,RemoteWallClockTime"); }
    catch (err) { body.replaceChildren(el("tr", {}, el("td", {colspan: "7", text: "Cannot load the archive: " + err.message}))); return; }
    const rows = answer.jobs.map(ad => {
      const id = jobId(ad);
      const runs = el("button", {type: "button", "aria-expanded": "false", "data-epochs": id, onclick: ev => epochs(ev.target, id)}, `Runs (${ad.NumShadowStarts || 0})`);
      return el("tr", {"data-job": id}, el("th", {scope: "row"}, el("a", {href: "/job/" + id, text: id})),
        el("td", {text: ad.JobBatchName || ""}), el("td", {text: statusName(ad.JobStatus)}),
        el("td", {}, timeEl(ad.QDate)), el("td", {}, timeEl(ad.CompletionDate || ad.EnteredCurrentStatus)),
        el("td", {text: ad.ExitCode === undefined ? "" : String(ad.ExitCode)}), el("td", {}, runs));
    });
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", {colspan: "7", text: "No finished jobs yet."}))]));
    archiveCharts(answer.jobs);
  }

  // The archive at a glance: jobs by exit code (removed jobs apart), and by run time.
  const RUN_TIME_BINS = [[60, "under 1 min"], [600, "1–10 min"], [3600, "10–60 min"], [86400, "1–24 h"], [Infinity, "over 24 h"]];
  function archiveCharts(jobs) {
    const codes = new Map();
    for (const ad of jobs) {
      const key = ad.JobStatus === 3 ? "removed" : (ad.ExitCode === undefined ? "none" : "exit " + ad.ExitCode);
      codes.set(key, (codes.get(key) || 0) + 1);
    }
    const byCount = [...codes.entries()].sort((a, b) => b[1] - a[1]);
    $("#exit-codes").replaceChildren(...(byCount.length ? bars(byCount.map(([k, n]) => [k, n, jobs.length])) : [el("p", {class: "muted", text: "No finished jobs yet."})]));
    const ran = jobs.filter(ad => typeof ad.RemoteWallClockTime === "number");
    const counts = RUN_TIME_BINS.map(() => 0);
    for (const ad of ran) counts[RUN_TIME_BINS.findIndex(([limit]) => ad.RemoteWallClockTime < limit)]++;
    $("#run-times").replaceChildren(...(ran.length ? bars(RUN_TIME_BINS.map(([, label], i) => [label, counts[i], ran.length])) : [el("p", {class: "muted", text: "No run times yet."})]));
  }

  async function epochs(button, id) {
    const row = button.closest("tr");
    const next = row.nextElementSibling;
    if (next && next.classList.contains("epochs")) { next.remove(); button.setAttribute("aria-expanded", "false"); return; }
    const [c, p] = id.split(".");
    let answer;
    try { answer = await api(`/web/api/jobs/epochs?limit=50&backwards=false&constraint=${encodeURIComponent(`ClusterId == ${c} && ProcId == ${p}`)}`); }
    catch (err) { notice("Cannot load the runs: " + err.message, true); return; }
    const items = answer.jobs.map(e => el("li", {}, `${e.EpochAdType || "record"} `, timeEl(e.EpochWriteDate),
      e.ExitCode !== undefined ? ` exit code ${e.ExitCode}` : "", e.RemoteHost || e.LastRemoteHost ? ` on ${e.RemoteHost || e.LastRemoteHost}` : ""));
    row.after(el("tr", {class: "epochs"}, el("td", {colspan: "7"}, items.length ? el("ol", {}, ...items) : "No run records.")));
    button.setAttribute("aria-expanded", "true");
  }

  // ------------------------------------------------------------------ pool
  // Gauges the server reads at most once per interval (/web/pool) and the caller's own jobs.
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c);
    return node;
  }
  function bars(rows) {  // [[label, n, of]] as bars with their numbers (readable without colour)
    return rows.map(([label, n, of]) => {
      const bar = el("div", {class: "bar", "aria-hidden": "true"});
      bar.style.width = (100 * n / Math.max(of, 1)) + "%";
      return el("div", {class: "bar-row"}, el("span", {text: label}), el("div", {}, bar), el("span", {class: "n", text: `${n} of ${of}`}));
    });
  }
  const SERIES = [["Idle", "idle"], ["Running", "running"], ["Held", "held"]];
  function chart(history) {
    const W = 640, H = 180, L = 36, R = 90, T = 10, B = 22;
    const box = svg("svg", {class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-h chart-text"});
    if (history.length < 1) return box;
    const t0 = history[0].time, t1 = Math.max(history[history.length - 1].time, t0 + 1);
    const top = Math.max(1, ...history.flatMap(h => SERIES.map(([name]) => h.jobs[name] || 0)));
    const x = t => L + (W - L - R) * (t - t0) / (t1 - t0), y = n => H - B - (H - T - B) * n / top;
    box.append(svg("line", {class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B}), svg("line", {class: "axis", x1: L, y1: T, x2: L, y2: H - B}));
    const label = (text, tx, ty, anchor) => { const t = svg("text", {x: tx, y: ty, "text-anchor": anchor || "start"}); t.textContent = text; return t; };
    box.append(label(String(top), L - 4, T + 8, "end"), label("0", L - 4, H - B, "end"),
      label(new Date(t0 * 1000).toLocaleTimeString(), L, H - 6), label(new Date(t1 * 1000).toLocaleTimeString(), W - R, H - 6, "end"));
    const ends = [];
    for (const [name, cls] of SERIES) {
      const points = history.map(h => `${x(h.time).toFixed(1)},${y(h.jobs[name] || 0).toFixed(1)}`).join(" ");
      box.append(svg("polyline", {class: cls, points, "data-series": name}));
      const last = history[history.length - 1].jobs[name] || 0;
      if (history.length === 1) box.append(svg("circle", {class: cls, cx: x(t0), cy: y(last), r: 3}));
      ends.push([y(last) + 3, `${name} ${last}`]);
    }
    ends.sort((a, b) => a[0] - b[0]);  // the lines' end labels, 11 units apart at least
    for (let i = 1; i < ends.length; i++) ends[i][0] = Math.max(ends[i][0], ends[i - 1][0] + 11);
    const shift = Math.max(0, ends[ends.length - 1][0] - H + 2);
    for (const [ty, text] of ends) box.append(label(text, W - R + 4, ty - shift));
    return box;
  }
  async function refreshPool() {
    let pool, mine;
    try { [pool, mine] = await Promise.all([api("/web/pool"), api("/web/api/jobs?limit=0&projection=JobStatus")]); }
    catch (err) { $("#pool-state").textContent = "Cannot read the pool: " + err.message; return; }
    $("#pool-state").textContent = pool.up ? "" : "The last reading of the pool failed; these are the ones before it.";
    const states = Object.entries(pool.slots).sort((a, b) => b[1].slots - a[1].slots);
    const total = {slots: 0, cpus: 0, memory: 0};
    for (const [, r] of states) { total.slots += r.slots; total.cpus += r.cpus; total.memory += r.memory; }
    const row = (name, r, head) => el("tr", {"data-state": name}, el(head ? "td" : "th", {scope: head ? null : "row", text: name}),
      el("td", {text: String(r.slots)}), el("td", {text: String(r.cpus)}), el("td", {text: size(r.memory * 1024)}));
    $("#slots tbody").replaceChildren(...(states.length ? states.map(([n, r]) => row(n, r)) : [el("tr", {}, el("td", {colspan: "4", text: "No slots."}))]),
      ...(states.length > 1 ? [row("All", total)] : []));
    $("#slot-bars").replaceChildren(...bars(states.map(([n, r]) => [n + " CPUs", r.cpus, total.cpus])));
    const running = mine.jobs.filter(a => a.JobStatus === 2).length, all = pool.jobs.Running || 0;
    $("#share").textContent = `You have ${running} of the ${all} running job${all === 1 ? "" : "s"} in the queue (${mine.jobs.length} job${mine.jobs.length === 1 ? "" : "s"} of yours in all).`;
    $("#share").dataset.running = String(running); $("#share").dataset.all = String(all);
    $("#share-bars").replaceChildren(...bars([["Yours running", running, all]]));
    $("#chart").replaceChildren(chart(pool.history));
    const last = pool.history[pool.history.length - 1];
    $("#chart-text").textContent = last
      ? `${pool.history.length} reading${pool.history.length === 1 ? "" : "s"}, every ${pool.interval} s at most; the last: ` + SERIES.map(([n]) => `${n} ${last.jobs[n] || 0}`).join(", ") + "."
      : "No reading yet.";
    $("#updated").textContent = new Date().toLocaleTimeString();
    return pool.interval;
  }
  async function initPool() {
    const interval = await refreshPool();
    setInterval(refreshPool, 1000 * Math.max(5, interval || 15));
  }

  // ------------------------------------------------------------------ start
  initTheme();
  const page = document.body.dataset.page;
  if (page === "batches") { refreshBatches(); subscribe(); }
  else if (page === "submit") initSubmit();
  else if (page === "job") initJob();
  else if (page === "archive") initArchive();
  else if (page === "pool") initPool();
})();
