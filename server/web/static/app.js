// tracepriv web page: sanitise a trace, try the online mechanism, watch the budget.
//
// On the device by default: the mechanisms run in this browser (the WebAssembly module at /wasm/,
// loaded by its pinned loader), the server's ledger is charged before anything is drawn
// (POST /v1/people/{id}/charges, which never sees a location), and no request carries the true
// location. Proxy mode (the server draws: /locate and /sanitize take the true location) runs only
// when the person chooses it on the page (docs/device.md).
//
// Plain JavaScript over the vendored Leaflet; no build step. The person's id and token come in
// the URL fragment (#id=…&token=…), which browsers never send to a server; the token then lives
// in this tab's sessionStorage and leaves the browser only as an Authorization header. A link
// replaces credentials already stored only once the user confirms it.
//
// Nothing from the server or the URL is ever parsed as HTML: text goes into text nodes
// (textContent, or elements built by el()), tooltips included (tip()).
'use strict';

(function () {
  const COLORS = {
    original: '#0072b2',
    sanitised: '#d55e00',
    clicked: '#009e73',
    reported: '#cc79a7',
  };
  const FORMATS = { plt: 'plt', csv: 'csv', geojson: 'geojson', json: 'geojson', gpx: 'gpx' };
  const STORE_ID = 'tracepriv.id';
  const STORE_TOKEN = 'tracepriv.token';
  const STORE_MODE = 'tracepriv.mode'; // sessionStorage: "proxy" only when chosen in this tab
  const STORE_CLAIMS = 'tracepriv.claims'; // localStorage: charge ids already drawn for
  const STORE_SESSION = 'tracepriv.session.'; // localStorage, + person id: {charge_id, state}
  const STORE_PENDING = 'tracepriv.pending.'; // localStorage, + person id + what: a charge's key until it is used
  const STORE_DESIGN = 'tracepriv.design.'; // localStorage, + design key: the envelope's design (proven again before use)
  const MAX_ANSWERS = 50;
  // The predictive mechanism's modes (package geoind).
  const MODES = {
    test: 'private test of the prediction',
    noise: 'fresh noise',
    predict: 'prediction, reported without a test',
  };

  const $ = (id) => document.getElementById(id);

  // tip returns tooltip content as a text node's element: Leaflet would parse a string as HTML.
  function tip(text) {
    const span = document.createElement('span');
    span.textContent = text;
    return span;
  }
  const state = {
    id: '',
    token: '',
    map: null,
    traceLayer: null,
    queryLayer: null,
    queue: Promise.resolve(),
    accuracy: null,
    unit: '',
    download: [],
    pending: null, // credentials from a link, waiting for the user's confirmation
    centred: '', // the person whose public origin the map was centred on
    skew: 0, // the server's clock minus this browser's, in ms (from the Date header)
    lastTime: 0, // the time of the last query sent, in ms
    mode: 'device', // 'device' (the default) or 'proxy' (chosen explicitly)
    tp: null, // the module's API once loaded
    tpLoading: null,
    tpWarmed: false, // armModule started the module once
    session: null, // the device's geoind session
    person: null, // the person's configuration, from the ledger
  };

  // ---- messages ----------------------------------------------------------------------------

  function setStatus(text, busy) {
    const el = $('status');
    el.textContent = text || '';
    el.classList.toggle('busy', !!busy);
  }

  function showError(text) {
    const el = $('error');
    el.textContent = text;
    el.hidden = false;
  }

  function clearError() {
    const el = $('error');
    el.textContent = '';
    el.hidden = true;
  }

  // ApiError carries the HTTP status (0: no answer) and a message written for a person.
  class ApiError extends Error {
    constructor(status, message, retryable) {
      super(message);
      this.status = status;
      this.retryable = !!retryable;
    }
  }

  // The API's errors are {"error": {"code", "message"}}; a plain {"error": "…"} is read too.
  function serverCode(data) {
    const e = data && typeof data === 'object' ? data.error : null;
    return e && typeof e === 'object' && typeof e.code === 'string' ? e.code : '';
  }

  function serverMessage(data, text) {
    if (data && typeof data === 'object' && 'error' in data) {
      const e = data.error;
      if (typeof e === 'string') return e;
      if (e && typeof e === 'object') return e.message || JSON.stringify(e);
    }
    return (text || '').trim().slice(0, 300);
  }

  // wait reads a Retry-After header (seconds, or an HTTP date) as a duration for people.
  function wait(retryAfter) {
    let secs = Number(retryAfter);
    if (!isFinite(secs)) secs = (Date.parse(retryAfter) - Date.now()) / 1000;
    return isFinite(secs) ? seconds(Math.max(1, Math.round(secs))) : 'a while';
  }

  // explain turns a failed response into a sentence that says what happened and what to do.
  function explain(status, code, said, what, retryAfter) {
    const tail = said ? ' The server said: “' + said + '”.' : '';
    switch (status) {
      case 401:
        return 'The server did not accept your token (401 Unauthorized). Check the link you were ' +
          'given: it ends in #id=…&token=….' + tail;
      case 403:
        return 'This token may not act for person “' + state.id + '” (403 Forbidden): check the id and ' +
          'the token in the link you were given.' + tail;
      case 404:
        return 'Not found (404): is “' + state.id + '” the right person id?' + tail;
      case 413:
        return 'The file is too large for the server (413).' + tail;
      case 429:
        if (code === 'rate_limited' || (!code && retryAfter && !/budget/i.test(said))) {
          return 'Too many requests (429): wait ' + wait(retryAfter) + ' and try again.' + tail;
        }
        return 'Budget spent: the server refuses to ' + what + ' because your privacy budget is ' +
          'used up (429).' + tail +
          (retryAfter ? ' It renews in ' + wait(retryAfter) + ', with the next window.' : '');
      default:
        if (status >= 500) return 'The server failed to ' + what + ' (' + status + ').' + tail;
        return 'The server rejected the request to ' + what + ' (' + status + ').' + tail;
    }
  }

  // api calls the tracepriv API with the bearer token and returns the decoded JSON answer. With
  // opts.retry, a request that got no answer (network error, 502-504) is sent again as it was,
  // Idempotency-Key included: the server then returns its stored answer instead of drawing
  // fresh noise or charging again.
  async function api(method, path, opts) {
    opts = opts || {};
    for (let attempt = 0; ; attempt++) {
      try {
        return await apiOnce(method, path, opts);
      } catch (err) {
        if (!opts.retry || !err.retryable || attempt >= 2) throw err;
        await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
      }
    }
  }

  async function apiOnce(method, path, opts) {
    const headers = Object.assign({ Authorization: 'Bearer ' + state.token }, opts.headers || {});
    let resp;
    try {
      resp = await fetch(path, {
        method,
        headers,
        body: opts.body,
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
    } catch (err) {
      throw new ApiError(0, 'Could not reach the server to ' + opts.what + ' (' + err.message + ').', true);
    }
    // The server's clock (its Date header, to the second): a query's time must be near it,
    // whatever this computer's clock says. Changes of less than 2 s are the header's rounding.
    const date = Date.parse(resp.headers.get('Date') || '');
    if (isFinite(date)) {
      const skew = date - Date.now();
      if (Math.abs(skew - state.skew) > 2000) state.skew = Math.abs(skew) > 2000 ? skew : 0;
    }
    const text = await resp.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (_) {
      data = null;
    }
    if (!resp.ok) {
      // The server answers a wrong token with 401 or 403 (403 also for another person's id):
      // either way the person needs to enter the right id and token.
      if (resp.status === 401 || resp.status === 403) offerConnect();
      const retryable = resp.status === 502 || resp.status === 503 || resp.status === 504;
      throw new ApiError(resp.status,
        explain(resp.status, serverCode(data), serverMessage(data, text), opts.what, resp.headers.get('Retry-After')),
        retryable);
    }
    if (data === null || typeof data !== 'object') {
      throw new ApiError(resp.status, 'The server answered the request to ' + opts.what + ' with something that is not JSON.');
    }
    return data;
  }

  function personPath(suffix) {
    return '/v1/people/' + encodeURIComponent(state.id) + suffix;
  }

  // ---- formatting --------------------------------------------------------------------------

  function num(x, digits) {
    if (typeof x !== 'number' || !isFinite(x)) return '?';
    if (x === 0) return '0';
    return String(Number(x.toPrecision(digits || 4)));
  }

  function metres(m) {
    if (typeof m !== 'number' || !isFinite(m)) return '?';
    if (Math.abs(m) >= 1000) return num(m / 1000, 3) + ' km';
    return Math.round(m) + ' m';
  }

  function seconds(s) {
    if (s >= 3600) return num(s / 3600, 3) + ' h';
    if (s >= 120) return num(s / 60, 3) + ' min';
    return num(s, 3) + ' s';
  }

  function coord(x) {
    return (typeof x === 'number' && isFinite(x)) ? x.toFixed(5) : '?';
  }

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'class') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of children || []) e.append(c);
    return e;
  }

  // distance in metres between two WGS 84 points (haversine on the mean Earth radius).
  function distance(lat1, lon1, lat2, lon2) {
    const r = Math.PI / 180;
    const a = Math.sin((lat2 - lat1) * r / 2) ** 2 +
      Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin((lon2 - lon1) * r / 2) ** 2;
    return 2 * 6371008.8 * Math.asin(Math.min(1, Math.sqrt(a)));
  }

  // newKey returns a fresh 128-bit idempotency key. crypto.getRandomValues works in insecure
  // contexts too (crypto.randomUUID does not).
  function newKey() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  }

  // ---- credentials -------------------------------------------------------------------------

  function readCredentials() {
    state.id = sessionStorage.getItem(STORE_ID) || '';
    state.token = sessionStorage.getItem(STORE_TOKEN) || '';
  }

  function storeCredentials(id, token) {
    sessionStorage.setItem(STORE_ID, id);
    sessionStorage.setItem(STORE_TOKEN, token);
    readCredentials();
  }

  // readLink takes the id and token from the URL fragment. They are used at once when this tab
  // holds none (or the same); otherwise the page asks before replacing the ones it holds, so a
  // crafted link cannot switch the tab to another person unnoticed. It reports whether the
  // credentials changed.
  function readLink() {
    const frag = new URLSearchParams(location.hash.replace(/^#/, ''));
    const id = frag.get('id');
    const token = frag.get('token');
    if (!id || !token) return false;
    // Keep the token out of the address bar, the history and bookmarks.
    history.replaceState(null, '', location.pathname + location.search);
    const curId = sessionStorage.getItem(STORE_ID) || '';
    const curToken = sessionStorage.getItem(STORE_TOKEN) || '';
    if (!curId || !curToken || (curId === id && curToken === token)) {
      storeCredentials(id, token);
      return true;
    }
    state.pending = { id, token };
    $('link-text').textContent = curId === id
      ? 'This link brings a new token for person “' + id + '”. Use it in place of the one this tab holds?'
      : 'This link would connect this tab as person “' + id + '” in place of “' + curId + '”. Use it?';
    $('link-confirm').hidden = false;
    $('link-use').focus();
    return false;
  }

  function answerLink(use) {
    const p = state.pending;
    state.pending = null;
    $('link-confirm').hidden = true;
    if (!use || !p) {
      setStatus('The link was ignored; still connected as “' + state.id + '”.');
      return;
    }
    storeCredentials(p.id, p.token);
    showWho();
    clearError();
    refreshLedger();
  }

  // offerConnect shows the form to enter an id and token, as after a rejected token.
  function offerConnect() {
    $('connect').hidden = false;
    if (!$('person-id').value) $('person-id').value = state.id;
  }

  function showWho() {
    const who = $('who');
    who.textContent = '';
    if (state.id) {
      who.append('Person ', el('strong', { text: state.id }));
    }
    $('connect').hidden = !!(state.id && state.token);
  }

  // ---- map ---------------------------------------------------------------------------------

  function niceStep(span) {
    const raw = span / 6;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) {
      if (raw <= m * p) return m * p;
    }
    return 10 * p;
  }

  // Graticule draws latitude and longitude lines so that the map can be read with no tiles.
  function makeGraticule(map) {
    const layer = L.layerGroup();
    function redraw() {
      layer.clearLayers();
      const b = map.getBounds();
      const step = niceStep(Math.max(b.getNorth() - b.getSouth(), (b.getEast() - b.getWest()) / 2));
      const decimals = Math.max(0, -Math.floor(Math.log10(step)));
      const style = { color: '#c9ced6', weight: 1, interactive: false };
      const south = Math.max(-85, b.getSouth());
      const north = Math.min(85, b.getNorth());
      for (let lat = Math.ceil(south / step) * step; lat <= north; lat += step) {
        layer.addLayer(L.polyline([[lat, b.getWest()], [lat, b.getEast()]], style));
        // No label where it would run into the longitude labels along the top edge.
        if (map.latLngToContainerPoint([lat, b.getWest()]).y < 28) continue;
        layer.addLayer(L.marker([lat, b.getWest()], {
          interactive: false, keyboard: false,
          icon: L.divIcon({ className: 'grid-label', html: tip(lat.toFixed(decimals) + '°'), iconSize: null, iconAnchor: [-3, 12] }),
        }));
      }
      for (let lon = Math.ceil(b.getWest() / step) * step; lon <= b.getEast(); lon += step) {
        layer.addLayer(L.polyline([[south, lon], [north, lon]], style));
        layer.addLayer(L.marker([north, lon], {
          interactive: false, keyboard: false,
          icon: L.divIcon({ className: 'grid-label', html: tip(lon.toFixed(decimals) + '°'), iconSize: null, iconAnchor: [-3, -2] }),
        }));
      }
    }
    map.on('moveend zoomend resize', redraw);
    redraw();
    return layer;
  }

  function legendControl() {
    const c = L.control({ position: 'topright' });
    c.onAdd = function () {
      const d = el('div', { class: 'legend', id: 'legend', role: 'group', 'aria-label': 'Legend' }, [
        el('div', { class: 'legend-row' }, [el('span', { class: 'swatch original' }), 'Original trace']),
        el('div', { class: 'legend-row' }, [el('span', { class: 'swatch sanitised' }), 'Sanitised trace']),
        // The certificate in a line (its "legend"): the epsilon beside the family it holds against.
        el('div', { class: 'legend-row legend-cert', id: 'legend-cert', hidden: true }),
        el('div', { class: 'legend-row' }, [el('span', { class: 'dot start' }), 'start', el('span', { class: 'dot end' }), 'end']),
        el('div', { class: 'legend-row' }, [el('span', { class: 'dot clicked' }), 'Clicked (true) location']),
        el('div', { class: 'legend-row' }, [el('span', { class: 'dot reported' }), 'Reported (noisy) location']),
        el('div', { class: 'legend-row' }, [el('span', { class: 'swatch offset' }), 'Noise added']),
        el('div', { class: 'legend-row' }, [el('span', { class: 'ring' }), 'Accuracy radius (latest)']),
      ]);
      L.DomEvent.disableClickPropagation(d);
      return d;
    };
    return c;
  }

  function readoutControl(map) {
    const c = L.control({ position: 'bottomright' });
    c.onAdd = function () {
      const d = el('div', { class: 'coords-readout', 'aria-hidden': 'true' });
      map.on('mousemove', (e) => {
        const p = e.latlng.wrap();
        d.textContent = p.lat.toFixed(5) + ', ' + p.lng.toFixed(5);
      });
      return d;
    };
    return c;
  }

  // The bundled basemap's layers, coarsest first, each with the zoom from which it is drawn: at
  // zoom 4 one pixel is about 10 km at the equator, 1:110m's detail; at zoom 7 about 1.2 km,
  // finer than 1:50m's.
  const BASEMAP_LAYERS = [['110m', 0], ['50m', 4], ['10m', 7]];

  // pieces returns the single polygons and lines of a GeoJSON object, each with its bounding box
  // ([west, south, east, north]): the basemap builds Leaflet layers only for the pieces that come
  // into view, and Leaflet clips and draws a layer only when its bounds are in view, so a world of
  // islands costs what is on screen, where one MultiPolygon of the world was built, projected and
  // clipped whole on every move.
  function pieces(geo, style) {
    const out = [];
    const box = (coords, depth) => {
      const b = [Infinity, Infinity, -Infinity, -Infinity];
      const walk = (c, d) => {
        if (d === 0) {
          if (c[0] < b[0]) b[0] = c[0];
          if (c[1] < b[1]) b[1] = c[1];
          if (c[0] > b[2]) b[2] = c[0];
          if (c[1] > b[3]) b[3] = c[1];
          return;
        }
        for (const x of c) walk(x, d - 1);
      };
      walk(coords, depth);
      return b;
    };
    const add = (g) => {
      if (!g) return;
      if (g.type === 'GeometryCollection') g.geometries.forEach(add);
      else if (g.type === 'MultiPolygon') g.coordinates.forEach((c) => add({ type: 'Polygon', coordinates: c }));
      else if (g.type === 'MultiLineString') g.coordinates.forEach((c) => add({ type: 'LineString', coordinates: c }));
      else if (g.type === 'Polygon') out.push({ geometry: g, bbox: box(g.coordinates, 2), style, layer: null });
      else if (g.type === 'LineString') out.push({ geometry: g, bbox: box(g.coordinates, 1), style, layer: null });
    };
    if (geo.type === 'FeatureCollection') geo.features.forEach((f) => add(f.geometry));
    else if (geo.type === 'Feature') add(geo.geometry);
    else add(geo);
    return out;
  }

  // basemap draws the map's background. By default it is the bundled Natural Earth layer
  // (static/basemap, served by this server): a public tile server would learn from each tile
  // which area the person looks at, which is where they are. A server started with --tiles
  // names its own tile server in the page's tracepriv-tiles meta element. The bundled layer is
  // drawn at the detail the zoom needs (BASEMAP_LAYERS), each scale's file fetched the first time
  // the map gets to its zooms. Each file is the same whatever the view, and asked for whole, so
  // its request tells this server only how far the map was zoomed in, not where.
  function basemap(map) {
    const tiles = (document.querySelector('meta[name="tracepriv-tiles"]') || {}).content || '';
    const pane = map.createPane('basemap');
    pane.style.zIndex = 250; // over the tile pane, under the graticule and the traces
    pane.style.pointerEvents = 'none';
    if (tiles) {
      L.tileLayer(tiles, { maxZoom: 19, pane: 'basemap' }).addTo(map);
      document.body.dataset.basemap = 'tiles';
      return;
    }
    map.attributionControl.addAttribution('Natural Earth (public domain)');
    // Borders and places on canvases of their own above the land: pieces of land built as they
    // come into view must not be drawn over them.
    for (const [name, z] of [['basemap-borders', 251], ['basemap-places', 252]]) {
      const p = map.createPane(name);
      p.style.zIndex = z;
      p.style.pointerEvents = 'none';
    }
    const landRenderer = L.canvas({ pane: 'basemap', padding: 0.3 });
    const borderRenderer = L.canvas({ pane: 'basemap-borders', padding: 0.3 });
    const LAND = { renderer: landRenderer, pane: 'basemap', interactive: false, color: '#7f9db3', weight: 1, fillColor: '#ecebe2', fillOpacity: 1 };
    // Borders between two countries only (a !== b): coastlines are the land's outline.
    const BORDER = { renderer: borderRenderer, pane: 'basemap-borders', interactive: false, color: '#a58fae', weight: 1, dashArray: '4 3', fill: false };
    const get = (name) => fetch('static/basemap/' + name).then((r) => r.ok ? r.json() : Promise.reject(new Error(name + ': ' + r.status)));
    // layerOf returns a scale's layer group, whose update() builds the pieces now in view.
    const layerOf = (world) => {
      const all = pieces(topojson.feature(world, world.objects.land), LAND)
        .concat(pieces(topojson.mesh(world, world.objects.countries, (a, b) => a !== b), BORDER));
      const group = L.layerGroup();
      group.update = () => {
        const v = map.getBounds().pad(0.5);
        const w = v.getWest(), s = v.getSouth(), e = v.getEast(), n = v.getNorth();
        for (const p of all) {
          if (p.layer || p.bbox[0] > e || p.bbox[2] < w || p.bbox[1] > n || p.bbox[3] < s) continue;
          p.layer = L.GeoJSON.geometryToLayer({ type: 'Feature', properties: null, geometry: p.geometry }, p.style);
          group.addLayer(p.layer);
        }
      };
      return group;
    };
    const layers = {};
    const loading = {};
    let shown = null;
    const load = (name) => {
      if (!loading[name]) {
        loading[name] = get('world-' + name + '.topo.json').then((w) => { layers[name] = layerOf(w); });
      }
      return loading[name];
    };
    const show = () => {
      const z = map.getZoom();
      const want = BASEMAP_LAYERS.filter(([, from]) => z >= from).pop()[0];
      document.body.dataset.basemapWant = want;
      document.body.dataset.basemapZoom = String(z);
      if (!layers[want]) {
        load(want).then(show, (err) => {
          // The map keeps the layer it has.
          document.body.dataset.basemapDetail = 'failed';
          console.warn('basemap: ' + err.message);
        });
      }
      // Until the wanted scale is there, the one already drawn stays.
      const next = layers[want] ? want : shown;
      if (next !== shown) {
        if (shown) layers[shown].remove();
        layers[next].addTo(map);
        shown = next;
        document.body.dataset.basemapLayer = next;
      }
      if (shown) layers[shown].update();
    };
    const first = BASEMAP_LAYERS.filter(([, from]) => map.getZoom() >= from).pop()[0];
    Promise.all([load(first), get('places.geo.json')]).then(([, places]) => {
      show();
      map.on('moveend', show);
      const common = { renderer: L.canvas({ pane: 'basemap-places', padding: 0.3 }), interactive: false, pane: 'basemap-places' };
      const labels = L.layerGroup();
      for (const f of places.features || []) {
        const c = f.geometry && f.geometry.coordinates;
        if (!Array.isArray(c) || !isFinite(c[0]) || !isFinite(c[1])) continue;
        L.circleMarker([c[1], c[0]], Object.assign({
          radius: 2.5, color: '#4a4f58', weight: 1, fillColor: '#fff', fillOpacity: 1,
        }, common)).addTo(map);
        labels.addLayer(L.marker([c[1], c[0]], {
          interactive: false, keyboard: false, pane: 'basemap-places',
          icon: L.divIcon({ className: 'place-label', html: tip(String((f.properties || {}).name || '')), iconSize: null, iconAnchor: [-4, 7] }),
        }));
      }
      // Names only once the map is close enough for them not to pile up.
      const showLabels = () => {
        if (map.getZoom() >= 4) labels.addTo(map); else labels.remove();
      };
      map.on('zoomend', showLabels);
      showLabels();
      document.body.dataset.basemap = 'drawn';
    }).catch((err) => {
      // The map still works on the graticule alone.
      document.body.dataset.basemap = 'failed';
      console.warn('basemap: ' + err.message);
    });
  }

  function initMap() {
    const map = L.map('map', { worldCopyJump: true, zoomSnap: 0.5 }).setView([20, 0], 2);
    state.map = map;
    basemap(map);
    makeGraticule(map).addTo(map);
    L.control.scale({ position: 'bottomleft', maxWidth: 160 }).addTo(map);
    legendControl().addTo(map);
    readoutControl(map).addTo(map);
    state.traceLayer = L.featureGroup().addTo(map);
    state.queryLayer = L.featureGroup().addTo(map);

    map.on('click', (e) => {
      const p = e.latlng.wrap();
      report(p.lat, p.lng);
    });
    // The centre crosshair (the point Enter reports) shows only to keyboard users.
    let keyboard = false;
    document.addEventListener('keydown', () => { keyboard = true; }, true);
    document.addEventListener('mousedown', () => { keyboard = false; }, true);
    map.getContainer().addEventListener('focus', () => map.getContainer().classList.toggle('kbd', keyboard));
    map.getContainer().addEventListener('mousedown', () => map.getContainer().classList.remove('kbd'));
    map.getContainer().addEventListener('keydown', (e) => {
      map.getContainer().classList.add('kbd');
      if (e.key === 'Enter' && e.target === map.getContainer()) {
        e.preventDefault();
        const p = map.getCenter().wrap();
        report(p.lat, p.lng);
      }
    });
    map.on('moveend', () => {
      const p = map.getCenter().wrap();
      $('locate-lat').value = p.lat.toFixed(5);
      $('locate-lon').value = p.lng.toFixed(5);
    });
    map.fire('moveend');
  }

  // tracksOf returns the tracks of a GeoJSON object as arrays of [lat, lon]: each LineString
  // (or part of a MultiLineString) is a track, and Point features in order form one track.
  function tracksOf(gj) {
    const tracks = [];
    const points = [];
    function geometry(g) {
      if (!g) return;
      const line = (cs) => cs
        .filter((c) => Array.isArray(c) && isFinite(c[0]) && isFinite(c[1]))
        .map((c) => [c[1], c[0]]);
      switch (g.type) {
        case 'LineString': tracks.push(line(g.coordinates || [])); break;
        case 'MultiLineString': for (const cs of g.coordinates || []) tracks.push(line(cs)); break;
        case 'Point': points.push(...line([g.coordinates || []])); break;
        case 'MultiPoint': points.push(...line(g.coordinates || [])); break;
        case 'GeometryCollection': for (const x of g.geometries || []) geometry(x); break;
      }
    }
    if (!gj) return tracks;
    if (gj.type === 'FeatureCollection') for (const f of gj.features || []) geometry(f && f.geometry);
    else if (gj.type === 'Feature') geometry(gj.geometry);
    else geometry(gj);
    if (points.length) tracks.push(points);
    return tracks.filter((t) => t.length > 0);
  }

  function drawTracks(gj, kind, label) {
    const color = COLORS[kind];
    const tracks = tracksOf(gj);
    for (const t of tracks) {
      L.polyline(t, {
        color, weight: 3, opacity: kind === 'original' ? 1 : 0.85,
        className: 'trace-' + kind, interactive: true,
      }).bindTooltip(tip(label + ' (' + t.length + ' points)'), { sticky: true }).addTo(state.traceLayer);
      const end = t[t.length - 1];
      L.circleMarker(t[0], {
        radius: 7, color, weight: 3, fillColor: '#fff', fillOpacity: 1, className: 'marker-start ' + kind,
      }).bindTooltip(tip(label + ': start')).addTo(state.traceLayer);
      L.circleMarker(end, {
        radius: 7, color, weight: 3, fillColor: color, fillOpacity: 1, className: 'marker-end ' + kind,
      }).bindTooltip(tip(label + ': end')).addTo(state.traceLayer);
    }
    return tracks;
  }

  // ---- sanitise ----------------------------------------------------------------------------

  function formatOf(file) {
    const chosen = $('format').value;
    if (chosen !== 'auto') return chosen;
    const m = /\.([a-z0-9]+)$/i.exec(file.name);
    return m ? FORMATS[m[1].toLowerCase()] : undefined;
  }

  async function sanitize(file) {
    clearError();
    if (!requireCredentials()) return;
    const format = formatOf(file);
    if (!format) {
      showError('Cannot tell the format of “' + file.name + '” from its name: choose one under Format ' +
        '(PLT, CSV, GeoJSON or GPX) and pick the file again.');
      return;
    }
    setStatus('Sanitising ' + file.name + ' (' + num(file.size / 1024, 3) + ' KiB, ' + format + ')…', true);
    $('sanitize').setAttribute('aria-busy', 'true');
    try {
      // The map needs GeoJSON whatever the upload's format: ask for it (output=geojson).
      const res = state.mode !== 'proxy' ? await deviceSanitize(file, format)
        : await api('POST', personPath('/sanitize?format=' + encodeURIComponent(format) + '&output=geojson'), {
          body: file,
          headers: { 'Content-Type': 'application/octet-stream', 'Idempotency-Key': newKey() },
          what: 'sanitise the trace',
          retry: true,
        });
      res.trace = geojsonOf(res.trace, 'sanitised trace');
      res.original = geojsonOf(res.original, 'original trace');
      state.traceLayer.clearLayers();
      // The original goes on top: the sanitised trace's noise would otherwise hide it.
      const san = drawTracks(res.trace, 'sanitised', 'Sanitised');
      const orig = res.original ? drawTracks(res.original, 'original', 'Original') : [];
      if (!san.length) throw new ApiError(200, 'The server returned no sanitised trace.');
      const b = state.traceLayer.getBounds();
      // Keep the traces clear of the budget bar over the top of the map.
      if (b.isValid()) state.map.fitBounds(b, { paddingTopLeft: [30, 110], paddingBottomRight: [30, 30], animate: false });
      showCertificate(res.certificate || {});
      showReleaseCharge(res);
      offerDownloads(res);
      const n = (ts) => ts.reduce((s, t) => s + t.length, 0);
      setStatus('Sanitised ' + file.name + (state.mode === 'proxy' ? ' by the server' : ' on this device') + ': ' +
        (orig.length ? n(orig) + ' points in, ' : '') + n(san) + ' points out.');
      document.body.dataset.releases = String(Number(document.body.dataset.releases || 0) + 1);
      refreshLedger();
    } catch (err) {
      setStatus('');
      showError(err.message);
    } finally {
      $('sanitize').removeAttribute('aria-busy');
    }
  }

  // geojsonOf accepts a GeoJSON object, or GeoJSON as text.
  function geojsonOf(x, what) {
    if (x == null || typeof x === 'object') return x;
    try {
      return JSON.parse(x);
    } catch (_) {
      throw new ApiError(200, 'The server sent the ' + what + ' in a format the map cannot draw (not GeoJSON).');
    }
  }

  // showReleaseCharge says what the release cost: sanitising charges the person's CIP budget,
  // which is separate from the online mechanism's.
  function showReleaseCharge(res) {
    const el = $('cert-charge');
    if (typeof res.epsilon_charged !== 'number') {
      el.hidden = true;
      return;
    }
    el.textContent = 'This release charged ε ' + num(res.epsilon_charged) + ' to your trace-release (CIP) budget' +
      (typeof res.remaining === 'number' && typeof res.budget === 'number'
        ? ': ' + num(res.remaining) + ' of ' + num(res.budget) + ' left.' : '.');
    if (res.unit) el.title = res.unit;
    el.hidden = false;
  }

  // familyText describes a prior family: a list of kernel families
  // (certificate version 3, "kernels") or one.
  function familyText(f) {
    if (!f || typeof f !== 'object') return 'not stated';
    if (Array.isArray(f.kernels)) {
      return f.kernels.length ? f.kernels.map(familyText).join('; or ') : 'not stated';
    }
    const parts = ['Gaussian-process priors'];
    if (f.kernel) parts.push('kernel ' + f.kernel);
    if (isFinite(f.lengthscale_min_s) && isFinite(f.lengthscale_max_s)) {
      parts.push(f.lengthscale_min_s === f.lengthscale_max_s
        ? 'lengthscale ' + seconds(f.lengthscale_min_s)
        : 'any lengthscale from ' + seconds(f.lengthscale_min_s) + ' to ' + seconds(f.lengthscale_max_s));
    } else if (isFinite(f.lengthscale_s)) {
      parts.push('lengthscale ' + seconds(f.lengthscale_s));
    }
    if (isFinite(f.variance_min_m2)) parts.push('variance ≥ ' + num(f.variance_min_m2, 3) + ' m²');
    return parts.join(', ') + '; any mean';
  }

  // coverageText says how much of what held-out data shows the family holds
  // (prior_family.held_out_coverage, measured by tracepriv fit), rounded down.
  function coverageText(f) {
    if (!f || !isFinite(f.held_out_coverage)) return '';
    return ' (the family holds the preferred prior of ' + Math.floor(100 * f.held_out_coverage) + ' % of held-out windows)';
  }

  function showCertificate(c) {
    const p = (c.persons && c.persons[0]) || {};
    const kind = c.epsilon_kind === 'upper_bound' ? 'a proven upper bound over the prior family'
      : c.epsilon_kind === 'exact' ? 'exact (the worst case is attained)' : (c.epsilon_kind || '');
    const eps = $('cert-epsilon');
    eps.textContent = '';
    eps.append(el('strong', { text: num(c.epsilon_max) }), ' per ' + (c.privacy_unit || 'person') + (kind ? ', ' + kind : ''));
    const m = c.meaning || {};
    $('cert-meaning').textContent = isFinite(m.best_guess_accuracy)
      ? 'telling two places ' + metres(c.radius_m) + ' apart, the best possible guess is right ' +
        num(100 * m.best_guess_accuracy, 3) + ' % of the time (50 % is a coin toss)'
      : 'not stated';
    const cls = c.secret_classes || {};
    const names = { points: 'every point', places: 'every place (a stay or a trip moved as a whole)', route: 'the whole route moved as a whole' };
    const covered = Object.keys(names).filter((k) => cls[k] && cls[k].covered).map((k) => names[k]);
    $('cert-classes').textContent = covered.length ? covered.join(', ') : 'not stated';
    $('cert-lambda').textContent = num(c.lambda);
    $('cert-radius').textContent = metres(c.radius_m) + ' of each other (any two hypotheses about a location)';
    $('cert-family').textContent = familyText(c.prior_family) + coverageText(c.prior_family);
    const lc = $('legend-cert');
    if (lc) {
      lc.textContent = typeof c.legend === 'string' ? c.legend : '';
      lc.hidden = !lc.textContent;
    }
    const rms = $('cert-rms');
    rms.textContent = '';
    rms.append(el('strong', { text: metres(p.rms_noise_m) }), ' RMS displacement per point');
    $('cert-points').textContent = (p.points != null ? p.points : '?') +
      (c.persons && c.persons.length > 1 ? ' (first of ' + c.persons.length + ' people shown)' : '') +
      (c.skipped_rows ? '; ' + c.skipped_rows + ' input rows skipped' : '');
    const o = c.origin || {};
    $('cert-origin').textContent = isFinite(o.lat) ? coord(o.lat) + ', ' + coord(o.lon) + (o.source ? ' (' + o.source + ')' : '') : 'not stated';
    $('cert-explanation').textContent = p.explanation || '';
    $('cert-guarantee').textContent = c.guarantee || '';
    const warn = $('cert-warning');
    if (typeof c.randomness === 'string' && c.randomness.startsWith('seeded')) {
      warn.textContent = 'Seeded randomness (' + c.randomness + '): this release is reproducible and NOT private.';
      warn.hidden = false;
    } else {
      warn.hidden = true;
    }
    $('cert').hidden = false;
  }

  function offerDownloads(res) {
    for (const u of state.download) URL.revokeObjectURL(u);
    const blob = (x) => URL.createObjectURL(new Blob([JSON.stringify(x, null, 2)], { type: 'application/json' }));
    state.download = [blob(res.trace), blob(res.certificate)];
    $('dl-trace').href = state.download[0];
    $('dl-cert').href = state.download[1];
  }

  function initDrop() {
    const drop = $('drop');
    const input = $('file');
    input.addEventListener('change', () => {
      if (input.files && input.files[0]) sanitize(input.files[0]);
      input.value = '';
    });
    for (const ev of ['dragenter', 'dragover']) {
      drop.addEventListener(ev, (e) => {
        e.preventDefault();
        drop.classList.add('over');
      });
    }
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      const f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
      if (f) sanitize(f);
    });
    // A file dropped anywhere else must not make the browser navigate away from the page.
    window.addEventListener('dragover', (e) => e.preventDefault());
    window.addEventListener('drop', (e) => e.preventDefault());
  }

  // ---- online mechanism ----------------------------------------------------------------------

  // settle rounds away the float residue that sums of charges leave (a remaining budget of
  // 1e-12 of a total of 0.02 is none).
  function settle(x, total) {
    return Math.abs(x) <= 1e-9 * Math.abs(total) ? 0 : x;
  }

  // setBudget draws the online budget. exhausted (the ledger's word) means that what is left
  // cannot pay another answer: the page then says so instead of showing a sliver of bar.
  function setBudget(spent, remaining, unit, exhausted) {
    if (typeof spent !== 'number' || typeof remaining !== 'number') return;
    remaining = settle(remaining, spent + remaining);
    if (unit) state.unit = unit;
    const total = spent + remaining;
    const frac = exhausted ? 0 : total > 0 ? Math.max(0, Math.min(1, remaining / total)) : 0;
    const bar = $('budget-bar');
    const fill = $('budget-fill');
    const text = exhausted
      ? 'Exhausted: ' + num(remaining) + ' of ' + num(total) + ' left, too little for a query'
      : num(remaining) + ' of ' + num(total) + ' left';
    bar.setAttribute('aria-valuemax', String(total));
    bar.setAttribute('aria-valuenow', String(remaining));
    bar.setAttribute('aria-valuetext', text + ', ' + num(spent) + ' spent');
    $('budget-spent').textContent = num(spent) + ' spent' + (state.unit ? ' (' + state.unit + ')' : '');
    $('budget-spent').title = state.unit || '';
    fill.style.width = (100 * frac).toFixed(1) + '%';
    fill.classList.toggle('low', frac > 0 && frac < 0.2);
    bar.classList.toggle('empty', frac === 0);
    $('budget-text').textContent = text;
  }

  function addAnswer(li) {
    const list = $('answers');
    list.prepend(li);
    while (list.children.length > MAX_ANSWERS) list.lastChild.remove();
  }

  // report queues one locate call for a clicked location; calls run one after another so that
  // the budget bar follows the ledger's order.
  function report(lat, lon) {
    if (!requireCredentials()) return;
    state.queue = state.queue.then(() => locate(lat, lon));
  }

  // proxyLocate asks the server to draw: the true location goes in the request.
  async function proxyLocate(lat, lon, ms) {
    return api('POST', personPath('/locate'), {
      body: JSON.stringify({ lat, lon, time: new Date(ms).toISOString() }),
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': newKey() },
      what: 'report this location',
      retry: true,
    });
  }

  async function locate(lat, lon) {
    // The time of the fix on the server's clock, never before the previous query's: the
    // mechanism takes a person's queries in time order.
    const ms = Math.max(Date.now() + state.skew, state.lastTime + 1);
    state.lastTime = ms;
    const truth = L.circleMarker([lat, lon], {
      radius: 6, color: COLORS.clicked, weight: 2, fillColor: COLORS.clicked, fillOpacity: 0.9,
      className: 'marker-clicked',
    }).addTo(state.queryLayer);
    setStatus('Reporting ' + coord(lat) + ', ' + coord(lon) + '…', true);
    let res;
    try {
      res = state.mode === 'proxy' ? await proxyLocate(lat, lon, ms) : await deviceLocate(lat, lon, ms);
    } catch (err) {
      truth.setStyle({ fillColor: '#fff', color: '#b00020' });
      truth.bindTooltip(tip('Refused: ' + err.message));
      addAnswer(el('li', { class: 'refused', text: 'Refused (' + (err.status || 'no answer') + ') at ' + coord(lat) + ', ' + coord(lon) }));
      setStatus('');
      showError(err.message);
      if (err.status === 429) refreshLedger();
      return;
    }
    if (!isFinite(res.lat) || !isFinite(res.lon) || typeof res.lat !== 'number' || typeof res.lon !== 'number') {
      truth.remove();
      setStatus('');
      showError('The server answered without a reported location (no numeric lat and lon).');
      return;
    }
    clearError();
    const d = distance(lat, lon, res.lat, res.lon);
    L.polyline([[lat, lon], [res.lat, res.lon]], {
      color: '#5b6474', weight: 2, dashArray: '5 5', interactive: false, className: 'offset-line',
    }).addTo(state.queryLayer);
    L.circleMarker([res.lat, res.lon], {
      radius: 7, color: '#fff', weight: 2, fillColor: COLORS.reported, fillOpacity: 1, className: 'marker-reported',
    }).bindTooltip(tip('Reported ' + coord(res.lat) + ', ' + coord(res.lon) + ' (' + metres(d) + ' away)'))
      .addTo(state.queryLayer);
    truth.bindTooltip(tip('Clicked ' + coord(lat) + ', ' + coord(lon)));
    // The mechanism's accuracy radius: where the true location lies, with the confidence the
    // server's configuration states. Only the latest one is drawn.
    if (state.accuracy) state.accuracy.remove();
    state.accuracy = null;
    if (typeof res.accuracy_m === 'number' && res.accuracy_m > 0 && isFinite(res.accuracy_m)) {
      state.accuracy = L.circle([res.lat, res.lon], {
        radius: res.accuracy_m, color: COLORS.reported, weight: 1.5, dashArray: '4 4', fill: false,
        interactive: false, className: 'accuracy-circle',
      }).addTo(state.queryLayer);
    }
    const extra = [];
    if (res.mode) extra.push(MODES[res.mode] || res.mode);
    if (typeof res.accuracy_m === 'number' && res.accuracy_m > 0) extra.push('accuracy ' + metres(res.accuracy_m));
    const li = el('li', { class: 'answer' }, [
      'Reported ', el('span', { class: 'coords', text: coord(res.lat) + ', ' + coord(res.lon) }),
      ', ' + metres(d) + ' from the click; charged ε ', el('strong', { class: 'charge', text: num(res.epsilon_charged) }),
      extra.length ? ' (' + extra.join(', ') + ')' : '',
    ]);
    addAnswer(li);
    // Noise can carry the reported point far out of view: zoom out just enough to show it.
    const view = state.map.getBounds();
    if (!view.contains([res.lat, res.lon])) {
      state.map.fitBounds(view.extend([res.lat, res.lon]), { paddingTopLeft: [40, 110], paddingBottomRight: [40, 40] });
    }
    setBudget(res.spent, res.remaining, res.unit);
    setStatus('Reported' + (state.mode === 'proxy' ? ' by the server' : ' on this device') + ': ' + metres(d) +
      ' from the true location, charged ε ' + num(res.epsilon_charged) + '.');
    document.body.dataset.answers = String(Number(document.body.dataset.answers || 0) + 1);
    if (state.mode === 'proxy' || res.charged) refreshLedger();
  }

  // ---- on the device -----------------------------------------------------------------------

  // loadModule loads the WebAssembly module through the pinned loader (traceprivLoad checks
  // the module's and the runtime's SHA-256) and restores the charge ids already drawn for.
  function loadModule() {
    if (state.tpLoading) return state.tpLoading;
    state.tpLoading = (async () => {
      if (typeof globalThis.traceprivLoad !== 'function') {
        throw new Error('The on-device module’s loader (/wasm/loader.js) did not load: reload the page.');
      }
      const tp = await globalThis.traceprivLoad();
      const claims = localStorage.getItem(STORE_CLAIMS);
      if (claims) check(tp.restoreClaims(claims));
      // Envelope designs kept from earlier releases: the module proves each again before use
      // and refuses what is corrupted, altered or stored under another key (then it is dropped,
      // and the next release designs the envelope again).
      for (let i = localStorage.length - 1; typeof tp.useDesign === 'function' && i >= 0; i--) {
        const k = localStorage.key(i);
        if (!k || !k.startsWith(STORE_DESIGN)) continue;
        const used = JSON.parse(tp.useDesign(k.slice(STORE_DESIGN.length), localStorage.getItem(k) || ''));
        if (used.error) localStorage.removeItem(k);
      }
      state.tp = tp;
      document.body.dataset.module = 'ready';
      return tp;
    })();
    state.tpLoading.catch((err) => {
      document.body.dataset.module = 'failed';
      state.tpLoading = null;
      showError('The on-device module did not load (' + err.message + '). Nothing was sent; reload the page, ' +
        'or choose “through the server” if you accept sending your true location.');
    });
    return state.tpLoading;
  }

  // check parses a module answer and throws its error.
  function check(text) {
    const a = typeof text === 'string' ? JSON.parse(text) : text;
    if (a && typeof a.error === 'string') {
      const e = new ApiError(0, a.error);
      e.exhausted = !!a.exhausted;
      e.charged = !!a.charged;
      throw e;
    }
    return a;
  }

  function saveClaims() {
    if (state.tp) localStorage.setItem(STORE_CLAIMS, state.tp.claims());
  }

  // charge asks the ledger to charge a release before the device draws it. The server never
  // sees the location: only the mechanism, epsilon, radius and the certificate's digest.
  // The idempotency key is stored under pending (person and what is charged: the session, or
  // the certificate's digest) before the request and reused until done() drops it, so that a
  // reload between the server's charge and the page's record of it replays that charge
  // instead of charging again.
  async function charge(body, what, pending) {
    const name = STORE_PENDING + state.id + '.' + pending;
    let key = localStorage.getItem(name);
    if (!key) {
      key = newKey();
      localStorage.setItem(name, key);
    }
    const c = await api('POST', personPath('/charges'), {
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      what,
      retry: true,
    });
    c.done = () => localStorage.removeItem(name);
    return c;
  }

  // person returns the person's configuration (the ledger's config), loading it once.
  async function person() {
    if (state.person && state.person.id === state.id) return state.person;
    const l = await api('GET', personPath('/ledger'), { what: 'read your configuration' });
    renderLedger(l);
    state.person = l.config;
    return state.person;
  }

  // deviceSession returns the device's geoind session: the stored one, or a new one paid by one
  // geoind charge (a cleared storage loses the session, not the budget: the ledger keeps it).
  async function deviceSession(tp) {
    if (state.session && state.session.id === state.id) return { s: state.session.s, charged: null };
    const stored = localStorage.getItem(STORE_SESSION + state.id);
    if (stored) {
      try {
        const st = JSON.parse(stored);
        const s = check(tp.resumeSession(JSON.stringify(st.state)));
        state.session = { id: state.id, s, charge_id: st.charge_id };
        return { s, charged: null };
      } catch (err) {
        localStorage.removeItem(STORE_SESSION + state.id);
      }
    }
    const p = await person();
    const cfg = p.geoind && p.geoind.session_config;
    if (!cfg || !cfg.params) throw new ApiError(0, 'The server did not send a session configuration for on-device queries (an older server?).');
    setStatus('Charging a new on-device session to your account…', true);
    let c = await charge({ mechanism: 'geoind', epsilon: cfg.params.epsilon, radius_m: p.account.radius_m }, 'charge a new session', 'session');
    let s;
    try {
      s = check(tp.newChargedSession(JSON.stringify(cfg), c.charge_id));
    } catch (err) {
      // The replayed charge already started a session whose state this browser lost (a reload
      // between the two saves below): that session is gone, so a new one is a new charge.
      if (!err.charged) throw err;
      c.done();
      c = await charge({ mechanism: 'geoind', epsilon: cfg.params.epsilon, radius_m: p.account.radius_m }, 'charge a new session', 'session');
      s = check(tp.newChargedSession(JSON.stringify(cfg), c.charge_id));
    }
    saveClaims();
    state.session = { id: state.id, s, charge_id: c.charge_id };
    localStorage.setItem(STORE_SESSION + state.id, JSON.stringify({ charge_id: c.charge_id, state: JSON.parse(s.state()) }));
    c.done();
    return { s, charged: c };
  }

  // deviceLocate draws the reported location in this browser; no request carries lat or lon.
  async function deviceLocate(lat, lon, ms) {
    const tp = await loadModule();
    const { s, charged } = await deviceSession(tp);
    let a;
    try {
      a = check(s.query(lat, lon, ms));
    } catch (err) {
      if (err.exhausted) {
        $('new-session').hidden = false;
        throw new ApiError(429, 'This on-device session’s budget is spent. “Start a new session” charges your account again.');
      }
      throw err;
    }
    // Persist the state before showing the report: a released step is never forgotten.
    localStorage.setItem(STORE_SESSION + state.id, JSON.stringify({ charge_id: state.session.charge_id, state: a.state }));
    const r = a.report;
    return {
      lat: r.lat, lon: r.lon, accuracy_m: r.accuracy_m, mode: r.mode, epsilon_charged: r.cost,
      spent: r.spent, remaining: r.remaining, unit: 'this session’s ε per metre', charged: !!charged,
    };
  }

  function newSession() {
    localStorage.removeItem(STORE_SESSION + state.id);
    state.session = null;
    $('new-session').hidden = true;
    clearError();
    setStatus('The next query starts a new on-device session (one charge to your account).');
  }

  // deviceSanitize plans the release on this device, charges its exact certificate, then
  // draws it: the trace never leaves the browser.
  async function deviceSanitize(file, format) {
    const tp = await loadModule();
    const p = await person();
    const bytes = new Uint8Array(await file.arrayBuffer());
    const opts = { epsilon: p.cip.epsilon, lambda: p.cip.lambda, radius_m: p.cip.radius_m, output: 'geojson', uid: state.id };
    setStatus('Planning the release on this device (' + num(file.size / 1024, 3) + ' KiB, ' + format + ')…', true);
    await new Promise((r) => setTimeout(r, 0)); // let the status show before the module blocks
    const plan = check(tp.planRelease(bytes, format, JSON.stringify(opts)));
    // The envelope's design depends on the prior family alone: kept for the next page load.
    if (plan.design) {
      try { localStorage.setItem(STORE_DESIGN + plan.design_key, plan.design); } catch (e) { /* storage full: design again next time */ }
    }
    // The plan's digest depends on public inputs only, so planning the same file again after a
    // reload names the same pending charge: it is replayed, and the device draws at most once for it.
    const c = await charge(JSON.parse(plan.charge()), 'charge this release', 'release.' + plan.certificate_sha256);
    setStatus('Charged; drawing the release on this device…', true);
    await new Promise((r) => setTimeout(r, 0));
    let r;
    try {
      r = check(plan.draw(c.charge_id));
    } finally {
      saveClaims();
      c.done();
    }
    document.body.dataset.certificateSha256 = r.certificate_sha256;
    if (r.certificate_sha256 !== plan.certificate_sha256) throw new ApiError(0, 'The release’s certificate is not the one charged.');
    return {
      trace: r.trace, certificate: JSON.parse(r.certificate), original: format === 'geojson' ? await file.text() : null,
      epsilon_charged: c.epsilon_charged, remaining: c.remaining, budget: c.budget, unit: c.unit,
    };
  }

  function setMode(mode) {
    state.mode = mode === 'proxy' ? 'proxy' : 'device';
    if (state.mode === 'proxy') sessionStorage.setItem(STORE_MODE, 'proxy');
    else sessionStorage.removeItem(STORE_MODE);
    for (const r of document.querySelectorAll('input[name="mode"]')) r.checked = r.value === state.mode;
    document.body.dataset.mode = state.mode;
    $('mode-note').textContent = state.mode === 'proxy'
      ? 'Through the server: your true location (or trace) is sent to the server, which draws the noise. Choose this only if you trust the operator.'
      : 'On this device: the noise is drawn in this browser; the server is asked only to charge your budget and never sees where you are.';
  }

  // armModule starts loading the module in device mode once the person turns to what needs it
  // (pointer or focus on the map, the trace panel or the query panel, a file dragged in): a
  // query or a release waits for the module anyway (deviceLocate, deviceSanitize), and a page
  // only looked at, or used in proxy mode, never pays the module's megabytes and its start-up
  // CPU (about 1 CPU-s of a page load in headless Chromium, BENCHMARKS.md). Whatever starts it,
  // nothing is drawn or sent before it is there.
  function armModule() {
    const warm = () => {
      if (state.mode !== 'device' || state.tpLoading || state.tp || state.tpWarmed) return;
      state.tpWarmed = true; // once: after a failure only an action tries again, and says so
      loadModule();
    };
    for (const id of ['map', 'sanitize', 'online']) {
      for (const ev of ['pointerover', 'focusin', 'dragenter']) $(id).addEventListener(ev, warm, { passive: true });
    }
  }

  // here reports the browser's own position (the Geolocation API).
  function here() {
    if (!requireCredentials()) return;
    if (!navigator.geolocation) {
      showError('This browser gives no position (no Geolocation API).');
      return;
    }
    navigator.geolocation.getCurrentPosition(
      (pos) => report(pos.coords.latitude, pos.coords.longitude),
      (err) => showError('The browser gave no position (' + err.message + ').'),
      { enableHighAccuracy: true, timeout: 10000, maximumAge: 0 });
  }

  // ---- ledger ------------------------------------------------------------------------------

  const PREFERRED = ['seq', 'id', 'time', 'at', 'created_at', 'kind', 'mechanism', 'operation',
    'epsilon', 'epsilon_charged', 'amount', 'window', 'request_id', 'idempotency_key'];

  // isoTime shortens an RFC 3339 time to "YYYY-MM-DD hh:mm:ss" in UTC; other text is kept.
  function isoTime(v) {
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(v)) return v;
    const t = new Date(v);
    return isNaN(t) ? v : t.toISOString().slice(0, 19).replace('T', ' ');
  }

  function scalar(v) {
    return v === null || ['string', 'number', 'boolean'].includes(typeof v);
  }

  // centreOnOrigin opens the map on the person's public origin (where their queries may be), with
  // the location fields there, unless something is already drawn.
  function centreOnOrigin(l) {
    const o = l.config && l.config.geoind && l.config.geoind.origin;
    if (state.centred === state.id || !o || !isFinite(o.lat) || !isFinite(o.lon)) return;
    state.centred = state.id;
    if (state.traceLayer.getLayers().length || state.queryLayer.getLayers().length) return;
    state.map.setView([o.lat, o.lon], 12);
  }

  function renderLedger(l) {
    setBudget(l.spent, l.remaining, l.unit, l.exhausted === true);
    centreOnOrigin(l);
    const charges = Array.isArray(l.charges) ? l.charges : [];
    const totals = $('ledger-totals');
    totals.textContent = '';
    totals.append(el('span', { class: 'total', text: 'Online queries: spent ' + num(l.spent) + ', remaining ' + num(settle(l.remaining, l.spent + l.remaining)) +
      (l.window_start ? ' in the window from ' + isoTime(l.window_start) + (l.window_end ? ' to ' + isoTime(l.window_end) : '') + ' UTC' : '') +
      (l.exhausted ? ' (exhausted: too little for another query)' : '') + '.', title: l.unit || '' }));
    if (l.cip && typeof l.cip.spent === 'number') {
      totals.append(' ', el('span', { class: 'total', text: 'Trace releases (CIP): spent ' + num(l.cip.spent) + ', remaining ' +
        num(settle(l.cip.remaining, l.cip.spent + l.cip.remaining)) + (l.cip.exhausted ? ' (exhausted: too little for another release)' : '') +
        '.', title: l.cip.unit || '' }));
    }
    totals.append(' ', el('span', { class: 'total', text: charges.length + (charges.length === 1 ? ' charge.' : ' charges.') }));
    const table = $('ledger-table');
    const thead = table.tHead;
    const tbody = table.tBodies[0];
    thead.textContent = '';
    tbody.textContent = '';
    if (!charges.length) {
      table.hidden = true;
      return;
    }
    const keys = new Set();
    for (const c of charges) for (const k in c) if (scalar(c[k])) keys.add(k);
    const cols = PREFERRED.filter((k) => keys.has(k)).concat([...keys].filter((k) => !PREFERRED.includes(k)).sort());
    thead.append(el('tr', {}, cols.map((k) => el('th', { scope: 'col', text: k.replace(/_/g, ' ') + (k === 'time' ? ' (UTC)' : '') }))));
    // Newest first: the server lists charges in the order they committed.
    for (const c of charges.slice().reverse()) {
      tbody.append(el('tr', {}, cols.map((k) => {
        const v = c[k];
        const text = v == null ? '' : typeof v === 'number' ? num(v, 6) : isoTime(String(v));
        return el('td', { class: /key|_id$/.test(k) ? 'key' : '', title: text, text });
      })));
    }
    table.hidden = false;
  }

  let ledgerSeq = 0;
  async function refreshLedger() {
    if (!state.id || !state.token) return;
    const seq = ++ledgerSeq;
    try {
      const l = await api('GET', personPath('/ledger'), { what: 'show the ledger' });
      if (seq === ledgerSeq) renderLedger(l);
    } catch (err) {
      if (seq === ledgerSeq) {
        $('ledger-totals').textContent = 'Could not load the ledger.';
        showError(err.message);
      }
    }
  }

  // ---- start -------------------------------------------------------------------------------

  function requireCredentials() {
    if (state.id && state.token) return true;
    showError('Connect first: open the link with your id and token, or enter them under Connect.');
    offerConnect();
    $('person-id').focus();
    return false;
  }

  function init() {
    readCredentials();
    readLink();
    setMode(sessionStorage.getItem(STORE_MODE) || 'device');
    for (const r of document.querySelectorAll('input[name="mode"]')) {
      r.addEventListener('change', () => { if (r.checked) setMode(r.value); });
    }
    armModule();
    $('here').addEventListener('click', here);
    $('new-session').addEventListener('click', newSession);
    showWho();
    initMap();
    initDrop();
    $('link-use').addEventListener('click', () => answerLink(true));
    $('link-keep').addEventListener('click', () => answerLink(false));
    $('connect-form').addEventListener('submit', (e) => {
      e.preventDefault();
      storeCredentials($('person-id').value.trim(), $('person-token').value.trim());
      $('person-token').value = '';
      showWho();
      clearError();
      refreshLedger();
    });
    $('forget').addEventListener('click', () => {
      sessionStorage.removeItem(STORE_ID);
      sessionStorage.removeItem(STORE_TOKEN);
      state.id = '';
      state.token = '';
      showWho();
      setStatus('Token forgotten.');
    });
    $('locate-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const lat = Number($('locate-lat').value);
      const lon = Number($('locate-lon').value);
      if (!isFinite(lat) || !isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) {
        showError('Latitude must be a number in [-90, 90] and longitude in [-180, 180].');
        return;
      }
      report(lat, lon);
    });
    $('ledger-refresh').addEventListener('click', refreshLedger);
    // A new link opened in this tab changes only the fragment: follow it.
    window.addEventListener('hashchange', () => {
      if (!/(^#|&)token=/.test(location.hash)) return;
      if (!readLink()) return; // waiting for the user to confirm, or nothing new
      showWho();
      clearError();
      refreshLedger();
    });
    if (state.id && state.token) {
      refreshLedger();
    } else {
      setStatus('Not connected.');
    }
    document.body.dataset.ready = 'true';
  }

  if (typeof L === 'undefined') {
    showError('The map library did not load; reload the page.');
    return;
  }
  init();
})();
