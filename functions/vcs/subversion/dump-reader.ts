/**
 * A streaming reader of Subversion's dump format (`svnadmin dump`, versions 2 and 3): each
 * revision's properties and each node's headers and properties, as they come. File contents are
 * skipped by their length, never kept, so a dump of any size reads in little memory.
 */

/** A properties block: the properties it sets, those it deletes, and whether it is a delta. */
export interface DumpProps {
  readonly set: ReadonlyMap<string, string>;
  /** Only in a delta (`Prop-delta: true`): properties removed from the node. */
  readonly deleted: readonly string[];
  /** A delta lists changes against the node's previous version (or its copy source); else all. */
  readonly delta: boolean;
}

export interface DumpNode {
  readonly revision: number;
  /** As in the dump: repository-relative, no leading slash. */
  readonly path: string;
  readonly kind: 'file' | 'dir' | undefined;
  readonly action: 'add' | 'change' | 'delete' | 'replace';
  readonly copyFrom: string | undefined;
  /** The revision `copyFrom` is copied at. */
  readonly copyFromRevision: number | undefined;
  readonly props: DumpProps | undefined;
}

export interface DumpHandlers {
  revision?(revision: number, props: DumpProps): void;
  node?(node: DumpNode): void;
}

export interface DumpReader {
  push(chunk: Buffer): void;
  /** The dump has ended; throws when it ended inside a record. */
  end(): void;
}

const NEWLINE = 0x0a;

export function dumpReader(handlers: DumpHandlers): DumpReader {
  let buffer: Buffer = Buffer.alloc(0);
  let headers = new Map<string, string>();
  /** Bytes of the current record's body still to skip (its text, after the properties). */
  let skip = 0;
  /** The properties block being awaited: its length, once the headers are read. */
  let propsLength: number | undefined;
  let bodyRest = 0;
  let revision = -1;

  const dispatch = (props: DumpProps | undefined) => {
    const rev = headers.get('Revision-number');
    const path = headers.get('Node-path');
    if (rev !== undefined) {
      revision = Number(rev);
      handlers.revision?.(revision, props ?? { set: new Map(), deleted: [], delta: false });
    } else if (path !== undefined) {
      const kind = headers.get('Node-kind');
      handlers.node?.({
        revision,
        path: path.replace(/^\/+/, ''),
        kind: kind === 'file' || kind === 'dir' ? kind : undefined,
        action: (headers.get('Node-action') ?? 'change') as DumpNode['action'],
        copyFrom: headers.get('Node-copyfrom-path')?.replace(/^\/+/, ''),
        copyFromRevision: headers.has('Node-copyfrom-rev')
          ? Number(headers.get('Node-copyfrom-rev'))
          : undefined,
        props,
      });
    }
    headers = new Map();
  };

  /** Handles what `buffer` holds; returns when it needs more. */
  const drain = () => {
    for (;;) {
      if (skip > 0) {
        const skipped = Math.min(skip, buffer.length);
        buffer = buffer.subarray(skipped);
        skip -= skipped;
        if (skip > 0) return;
      }
      if (propsLength !== undefined) {
        if (buffer.length < propsLength) return;
        const props = parseProps(buffer.subarray(0, propsLength), headers.get('Prop-delta') === 'true');
        buffer = buffer.subarray(propsLength);
        propsLength = undefined;
        skip = bodyRest;
        dispatch(props);
        continue;
      }
      const end = buffer.indexOf(NEWLINE);
      if (end < 0) return;
      const line = buffer.subarray(0, end).toString('utf8');
      buffer = buffer.subarray(end + 1);
      if (line !== '') {
        const colon = line.indexOf(': ');
        if (colon > 0) headers.set(line.slice(0, colon), line.slice(colon + 2));
        else if (line.endsWith(':')) headers.set(line.slice(0, -1), ''); // `Node-path: ` of the root
        continue;
      }
      if (headers.size === 0) continue; // blank lines between records
      const prop = Number(headers.get('Prop-content-length') ?? 0);
      const text = Number(headers.get('Text-content-length') ?? 0);
      const content = Number(headers.get('Content-length') ?? prop + text);
      if (!Number.isSafeInteger(prop) || !Number.isSafeInteger(content) || prop > content)
        throw new Error('the dump has a malformed record');
      if (headers.has('Prop-content-length')) {
        propsLength = prop;
        bodyRest = content - prop;
      } else {
        skip = content;
        dispatch(undefined);
      }
    }
  };

  return {
    push(chunk) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      drain();
    },
    end() {
      drain();
      if (skip > 0 || propsLength !== undefined) throw new Error('the dump ended inside a record');
      if (headers.size > 0) dispatch(undefined);
    },
  };
}

/** `K n\nkey\nV m\nvalue\n` pairs and `D n\nkey\n` deletions, up to `PROPS-END`. */
function parseProps(block: Buffer, delta: boolean): DumpProps {
  const set = new Map<string, string>();
  const deleted: string[] = [];
  let at = 0;
  const readLine = () => {
    const end = block.indexOf(NEWLINE, at);
    if (end < 0) throw new Error('the dump has a malformed properties block');
    const line = block.subarray(at, end).toString('latin1');
    at = end + 1;
    return line;
  };
  const readBytes = (length: number) => {
    const value = block.subarray(at, at + length).toString('utf8');
    at += length + 1; // the newline after it
    return value;
  };
  while (at < block.length) {
    const line = readLine();
    if (line === 'PROPS-END') break;
    const match = /^([KDV]) (\d+)$/.exec(line);
    if (!match) throw new Error('the dump has a malformed properties block');
    const key = readBytes(Number(match[2]));
    if (match[1] === 'D') {
      deleted.push(key);
      continue;
    }
    const value = /^V (\d+)$/.exec(readLine());
    if (!value) throw new Error('the dump has a malformed properties block');
    set.set(key, readBytes(Number(value[1])));
  }
  return { set, deleted, delta };
}
