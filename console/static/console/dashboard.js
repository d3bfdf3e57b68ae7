// The live dashboard: polls the JSON endpoints and updates the page in place (no reload).
"use strict";
(function () {
  const cfg = window.CONSOLE;
  const $ = (sel) => document.querySelector(sel);
  const fmtTime = (secs) => (secs ? new Date(secs * 1000).toLocaleString() : "–");
  const esc = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const hostState = { q: "", sort: "waiting", dir: "desc", page: 1, pages: 1 };

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response.json();
  }

  function renderDashboard(data) {
    for (const [key, value] of Object.entries(data.counters)) {
      const cell = document.querySelector(`[data-counter="${key}"]`);
      if (cell) cell.textContent = value.toLocaleString();
    }
    $("#state").textContent = data.state;
    $("#state").className = `state ${data.state}`;
    const why = $("#why");
    why.hidden = !data.why;
    why.textContent = data.why ? `Why isn't it progressing? ${data.why}` : "";
    $("#throughput").innerHTML = data.throughput_svg;
    $("#statuses").innerHTML = data.status_svg;
    const focused = document.activeElement && document.activeElement.classList.contains("span");
    if (!focused) {
      $("#hubs tbody").innerHTML = data.hubs.map((h) => `<tr>
        <td class="url">${esc(h.url)}</td>
        <td><form class="span-form" data-hub="${h.id}"><input class="span" type="number" min="1" step="any" name="refresh_span" value="${h.refresh_span}" aria-label="Refresh span of ${esc(h.url)} in seconds"> <button type="submit">Save</button></form></td>
        <td>${fmtTime(h.last_fetched_at)}</td><td>${fmtTime(h.next_due_at)}</td><td>${h.last_new_urls}</td><td>${h.enabled ? "yes" : "no"}</td></tr>`).join("") ||
        '<tr><td colspan="6">No hub.</td></tr>';
    }
    const w = data.workers;
    $("#workers").textContent = `${w.workers.length} worker(s) alive${w.workers.length ? ": " + w.workers.map((x) => `${x.name} (${x.state})`).join(", ") : ""}; ${w.queued} job(s) queued, ${w.failed} failed for this project.`;
  }

  function renderHosts(data) {
    hostState.pages = data.pages;
    hostState.page = data.page;
    $("#host-total").textContent = `(${data.total.toLocaleString()})`;
    $("#host-page").textContent = `page ${data.page} of ${data.pages}`;
    $("#host-prev").disabled = data.page <= 1;
    $("#host-next").disabled = data.page >= data.pages;
    $("#hosts tbody").innerHTML = data.rows.map((r) => `<tr>
      <td>${esc(r.host)}</td><td>${r.waiting}</td><td>${r.inflight}</td><td>${r.succeeded}</td><td>${r.failed}</td>
      <td>${r.retrying}</td><td>${esc(r.last) || "–"}</td><td>${r.latency_ms === null ? "–" : r.latency_ms + " ms"}</td>
      <td>${r.next_at ? fmtTime(r.next_at) + " (" + esc(r.next_reason) + ")" : "now"}</td></tr>`).join("") ||
      '<tr><td colspan="9">No host yet.</td></tr>';
    document.querySelectorAll("#hosts th").forEach((th) => {
      const key = th.querySelector("button").dataset.sort;
      if (key === hostState.sort) th.setAttribute("aria-sort", hostState.dir === "desc" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }

  async function refreshHosts() {
    const params = new URLSearchParams({ q: hostState.q, sort: hostState.sort, dir: hostState.dir, page: hostState.page });
    renderHosts(await getJSON(`${cfg.hosts}?${params}`));
  }

  async function refresh() {
    try {
      renderDashboard(await getJSON(cfg.dashboard));
      await refreshHosts();
    } catch (err) {
      $("#why").hidden = false;
      $("#why").textContent = `Could not refresh: ${err.message}`;
    }
  }

  document.querySelectorAll("#hosts th button").forEach((button) =>
    button.addEventListener("click", () => {
      const key = button.dataset.sort;
      hostState.dir = hostState.sort === key && hostState.dir === "desc" ? "asc" : "desc";
      hostState.sort = key;
      hostState.page = 1;
      refreshHosts();
    }));
  let searchTimer;
  $("#host-search").addEventListener("input", (event) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { hostState.q = event.target.value.trim(); hostState.page = 1; refreshHosts(); }, 250);
  });
  $("#host-prev").addEventListener("click", () => { hostState.page -= 1; refreshHosts(); });
  $("#host-next").addEventListener("click", () => { hostState.page += 1; refreshHosts(); });
  $("#hubs").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const url = cfg.hubSpan.replace(/\/0\/span$/, `/${form.dataset.hub}/span`);
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin", body: new FormData(form),
      headers: { Accept: "application/json", "X-CSRFToken": cfg.csrf },
    });
    const body = await response.json();
    form.querySelector("input").setCustomValidity(response.ok ? "" : body.error);
    form.querySelector("input").reportValidity();
    if (response.ok) { form.querySelector("input").blur(); refresh(); }
  });

  refresh();
  setInterval(refresh, 3000);
})();
