/**
 * The Mercurial client's side of the network guard: a small hg extension (`importguard`) loaded on
 * every hg call that can reach the origin. The guard proxy only sees what hg sends through it;
 * urllib inside hg can also open `ftp:`, `file:` and `data:` URLs itself (a clone-bundle manifest,
 * a redirect), and follows redirects to any host. So the extension, in hg's own process:
 *
 * - turns clone bundles off (`ui.clonebundles`, and the code paths that apply one) and stream
 *   clones (a server's `stream-preferred` would otherwise pick one), and refuses `remote-changegroup`
 *   parts: hg gets the history from the origin's wire protocol and nothing else;
 * - drops urllib's FTP, file and data handlers from every opener `mercurial.url.opener` builds, and
 *   refuses every request and every redirect that is not http(s) to the origin's own scheme, host
 *   and port (redirects inside the origin are followed);
 * - makes every socket read wait at most `inactivity` seconds (`http.timeout`), and turns the
 *   timeout into one readable abort;
 * - reads the origin's credentials once from a file descriptor (`runBounded`'s `secret`) and hands
 *   them out, in memory, only for the origin's scheme, host, port and path.
 *
 * Its aborts start with `importguard:` so the adapter can tell them from the origin's own errors;
 * they name a scheme, or a scheme, host and port, never a path (a `file:` path is the worker's disk).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SECRET_FD } from '#vcs/bounded-process';
import { OriginFailed } from '#vcs/origin';

export interface HgNetwork {
  /** The repository URL: hg talks only to its scheme, host and port; credentials go to its path only. */
  readonly origin: string;
  /** The guard proxy's port on 127.0.0.1, hg's only way out. */
  readonly proxyPort: number;
  /** Longest wait for any byte from the origin before the call fails. */
  readonly inactivityMs: number;
  readonly credentials?: { readonly username: string; readonly password: string } | undefined;
}

const EXTENSION = String.raw`
import json, os, socket, urllib.error, urllib.parse, urllib.request
from mercurial import (bundle2, dispatch, error, exchange, extensions, httpconnection, registrar,
                       streamclone, url as urlmod)

testedwith = b'6.3'
configtable = {}
configitem = registrar.configitem(configtable)
configitem(b'importguard', b'origin', default=None)
configitem(b'importguard', b'inactivity', default=60.0)
configitem(b'importguard', b'credentials-fd', default=None)

PORTS = {'http': 80, 'https': 443}
NOT_HTTP = (urllib.request.FTPHandler, urllib.request.FileHandler, urllib.request.DataHandler)
state = {'origin': None, 'inactivity': 60.0, 'credentials': None, 'ready': False}

def split(url):
    """(scheme, host, port, path) of an http(s) URL; None for anything else."""
    try:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or '').lower()
        port = parts.port or PORTS.get(scheme)
    except ValueError:
        return None
    if scheme not in PORTS or not host:
        return None
    return scheme, host, port, parts.path or '/'

def same_server(url):
    target = split(url)
    return target is not None and target[:3] == state['origin'][:3]

def refuse(what, url):
    target = split(url)
    if target is None:
        scheme = urllib.parse.urlsplit(url).scheme.lower() if ':' in url else ''
        shown = scheme[:20] + ':' if scheme.isalnum() else 'a URL without a scheme'
    else:
        shown = '%s://%s:%d' % (target[0], target[1][:100], target[2])
    raise error.Abort(('importguard: refused %s to %s' % (what, shown)).encode('ascii', 'replace'))

class gatehandler(urllib.request.BaseHandler):
    """Sees every request an opener sends, redirects included, before any handler opens it."""
    handler_order = 0
    def __init__(self, ui, passmgr):
        pass
    def default_open(self, req):
        if not same_server(req.full_url):
            refuse('request', req.full_url)
        return None

class redirecthandler(urllib.request.HTTPRedirectHandler):
    """Replaces urllib's: a redirect is followed only within the origin's scheme, host and port."""
    def __init__(self, ui, passmgr):
        pass
    def http_error_302(self, req, fp, code, msg, headers):
        location = headers.get('location') or headers.get('uri')
        if location is not None:
            target = urllib.parse.urljoin(req.full_url, location)
            if not same_server(target):
                refuse('redirect', target)
        return super().http_error_302(req, fp, code, msg, headers)
    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

def opener(orig, ui, *args, **kwargs):
    built = orig(ui, *args, **kwargs)
    built.handlers = [h for h in built.handlers if not isinstance(h, NOT_HTTP)]
    for protocol in list(built.handle_open):
        kept = [h for h in built.handle_open[protocol] if not isinstance(h, NOT_HTTP)]
        if kept:
            built.handle_open[protocol] = kept
        else:
            del built.handle_open[protocol]
    return built

def readauthforuri(orig, ui, uri, user):
    """The only [auth] entry: the origin's scheme, host, port and path (and below it)."""
    credentials = state['credentials']
    target = split(uri.decode('latin-1') if isinstance(uri, bytes) else uri)
    if credentials is None or target is None or target[:3] != state['origin'][:3]:
        return None
    prefix = state['origin'][3].rstrip('/')
    if target[3] != prefix and not target[3].startswith(prefix + '/'):
        return None
    return b'importguard', {b'username': credentials['username'].encode('utf-8'),
                            b'password': credentials['password'].encode('utf-8')}

def silent():
    raise error.Abort(b'importguard: the origin sent nothing in time')

def runcommand(orig, *args, **kwargs):
    try:
        return orig(*args, **kwargs)
    except socket.timeout:
        silent()
    except urllib.error.URLError as inst:
        if isinstance(getattr(inst, 'reason', None), socket.timeout):
            silent()
        raise

def no_clone_bundle(orig, pullop):
    return None

def no_bundle_url(orig, ui, repo, url):
    refuse('clone bundle', url.decode('latin-1') if isinstance(url, bytes) else url)

def no_stream_clone(orig, *args, **kwargs):
    return False, None

def uisetup(ui):
    if state['ready']:
        return
    state['ready'] = True
    origin = ui.config(b'importguard', b'origin')
    state['origin'] = split(origin.decode('utf-8')) if origin else None
    if state['origin'] is None:
        raise error.Abort(b'importguard: importguard.origin must be an http(s) URL')
    state['inactivity'] = float(ui.config(b'importguard', b'inactivity'))
    fd = ui.config(b'importguard', b'credentials-fd')
    if fd:
        chunks = []
        while True:
            chunk = os.read(int(fd), 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(int(fd))
        state['credentials'] = json.loads(b''.join(chunks).decode('utf-8'))
    urlmod.handlerfuncs.extend([gatehandler, redirecthandler])
    extensions.wrapfunction(urlmod, 'opener', opener)
    extensions.wrapfunction(httpconnection, 'readauthforuri', readauthforuri)
    extensions.wrapfunction(dispatch, 'runcommand', runcommand)
    extensions.wrapfunction(exchange, '_maybeapplyclonebundle', no_clone_bundle)
    extensions.wrapfunction(exchange, 'trypullbundlefromurl', no_bundle_url)
    extensions.wrapfunction(streamclone, 'canperformstreamclone', no_stream_clone)
    bundle2.capabilities[b'remote-changegroup'] = ()

def uipopulate(ui):
    ui.setconfig(b'ui', b'clonebundles', b'false', b'importguard')
    ui.setconfig(b'http', b'timeout', b'%f' % state['inactivity'], b'importguard')
`;

/** What the extension's aborts start with (see the module comment). */
const MARK = 'importguard:';

/**
 * The arguments that load the extension for one hg call (written into the job's HOME), and the
 * secret that call must get on `SECRET_FD`. Nothing here is secret: the credentials go only into
 * `secret`.
 */
export async function hgGuardArgs(
  home: string,
  network: HgNetwork,
): Promise<{ readonly args: readonly string[]; readonly secret?: string }> {
  const dir = join(home, '.hg-extensions');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'importguard.py');
  await writeFile(path, EXTENSION, { mode: 0o600 });
  const config = [
    `extensions.importguard=${path}`,
    `importguard.origin=${network.origin}`,
    `importguard.inactivity=${network.inactivityMs / 1000}`,
    `http_proxy.host=127.0.0.1:${network.proxyPort}`,
    // hg does not proxy loopback by default; the guard must see every connection.
    'http_proxy.always=true',
    ...(network.credentials ? [`importguard.credentials-fd=${SECRET_FD}`] : []),
  ];
  const args = config.flatMap((entry) => ['--config', entry]);
  if (!network.credentials) return { args };
  const { username, password } = network.credentials;
  return { args, secret: JSON.stringify({ username, password }) };
}

/** The `importguard` extension's refusals and its inactivity abort, as the user should read them. */
export function guardFailure(text: string, url: string, inactivityMs: number): OriginFailed | undefined {
  const at = text.indexOf(MARK);
  if (at < 0) return undefined;
  const abort =
    text
      .slice(at + MARK.length)
      .split('\n')[0]
      ?.trim() ?? '';
  if (abort.startsWith('the origin sent nothing'))
    return new OriginFailed(`The origin sent nothing for ${inactivityMs / 1000} seconds`);
  const refused = /^refused (request|redirect|clone bundle) to (.+)$/.exec(abort);
  if (!refused) return undefined;
  const origin = new URL(url).origin;
  const target = refused[2] ?? '';
  const shown = /^[a-z0-9]+:$/.test(target) ? `a URL of scheme ${target.slice(0, -1)}` : target;
  if (refused[1] === 'redirect')
    return new OriginFailed(
      `The origin redirected to ${shown}; redirects are followed only within ${origin}`,
    );
  return new OriginFailed(`The origin sent the client to ${shown}; only ${origin} is used`);
}
