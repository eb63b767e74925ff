// Listing objects as the caller (its policies decide what it sees), in the two
// shapes Storage answers: list (storage.search: one folder level under a
// prefix, names relative to it, case-insensitive prefix and search, offset
// paging) and list-v2 (storage.search_v2: full names, case-sensitive prefix,
// folders apart from objects with `with_delimiter`, cursor paging).
import type { Tx } from "./database.ts";
import { ERRORS } from "./errors.ts";

interface ListedRow {
  name: string;
  id: string;
  updated_at: Date;
  created_at: Date;
  last_accessed_at: Date;
  metadata: Record<string, unknown> | null;
}

/** Byte order of names, as `collate "C"` sorts them. */
const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface ListOptions {
  prefix: string;
  limit?: number;
  offset?: number;
  search?: string;
  sortBy?: { column: "name" | "updated_at" | "created_at" | "last_accessed_at"; order?: "asc" | "desc" };
}

/** POST /object/list/{bucket}: Storage's searchObjects over storage.search. */
export async function listObjects(tx: Tx, bucket: string, options: ListOptions) {
  // Storage takes the prefix to be a folder.
  const prefix = options.prefix.length > 0 && !options.prefix.endsWith("/") ? `${options.prefix}/` : options.prefix;
  const search = options.search ?? "";
  const limit = Math.min(options.limit ?? 100, 1500);
  const offset = options.offset ?? 0;
  const column = options.sortBy?.column ?? "name";
  const descending = options.sortBy?.order === "desc";
  const rows = await tx<ListedRow[]>`
    select name, id, updated_at, created_at, last_accessed_at, metadata from storage.objects
    where bucket_id = ${bucket} and starts_with(lower(name), ${(prefix + search).toLowerCase()})`;

  const folderOf = (row: ListedRow): string | null => {
    const relative = row.name.slice(prefix.length);
    const slash = relative.indexOf("/", search.length);
    return slash >= 0 ? relative.slice(0, slash) : null;
  };
  const folderEntry = (name: string) => ({
    name,
    id: null,
    updated_at: null,
    created_at: null,
    last_accessed_at: null,
    metadata: null,
  });
  const fileEntry = (row: ListedRow) => ({ ...row, name: row.name.slice(prefix.length) });
  const direction = descending ? -1 : 1;

  let entries;
  if (column === "name") {
    // Folders and files in one sequence, in the order of their lower-cased names.
    const sorted = rows.toSorted((a, b) => direction * byBytes(a.name.toLowerCase(), b.name.toLowerCase()));
    const seen = new Set<string>();
    entries = [];
    for (const row of sorted) {
      const folder = folderOf(row);
      if (folder === null) entries.push(fileEntry(row));
      else if (!seen.has(folder.toLowerCase())) {
        seen.add(folder.toLowerCase());
        entries.push(folderEntry(folder));
      }
    }
  } else {
    // Folders first (by name), then files by the column.
    const folders = [...new Set(rows.map(folderOf).filter((folder): folder is string => folder !== null))]
      .sort((a, b) => direction * byBytes(a, b));
    const files = rows.filter((row) => folderOf(row) === null)
      .sort((a, b) => direction * (a[column].getTime() - b[column].getTime()));
    entries = [...folders.map(folderEntry), ...files.map(fileEntry)];
  }
  return entries.slice(offset, offset + limit);
}

export interface ListV2Options {
  prefix?: string;
  limit?: number;
  cursor?: string;
  with_delimiter?: boolean;
  sortBy?: { column: "name" | "updated_at" | "created_at"; order?: "asc" | "desc" };
}

interface Cursor {
  startAfter: string;
  sortOrder?: string;
  sortColumn?: string;
  sortColumnAfter?: string;
}

const CURSOR_PARTS: Record<string, keyof Cursor> = {
  l: "startAfter",
  o: "sortOrder",
  c: "sortColumn",
  a: "sortColumnAfter",
};

function encodeCursor(cursor: Cursor): string {
  const lines = Object.entries(CURSOR_PARTS)
    .filter(([, field]) => cursor[field])
    .map(([letter, field]) => `${letter}:${cursor[field]}`);
  return btoa(String.fromCharCode(...new TextEncoder().encode(lines.join("\n"))));
}

function decodeCursor(token: string): Cursor {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(atob(token), (c) => c.charCodeAt(0)));
  } catch {
    throw ERRORS.invalidParameter("continuation token");
  }
  const cursor: Cursor = { startAfter: "", sortOrder: "asc" };
  for (const line of text.split("\n")) {
    const match = /^(\S):(.*)$/s.exec(line);
    if (!match || !(match[1] in CURSOR_PARTS)) throw ERRORS.invalidParameter("continuation token");
    cursor[CURSOR_PARTS[match[1]]] = match[2];
  }
  return cursor;
}

interface Entry {
  /** The name Storage answers (a folder's without its trailing slash until the end). */
  name: string;
  /** Where the entry sorts and pages: a folder sorts as its name with the delimiter. */
  sortKey: string;
  folder: boolean;
  id: string | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  metadata: Record<string, unknown> | null;
}

/** POST /object/list-v2/{bucket}: Storage's listObjectsV2. */
export async function listObjectsV2(tx: Tx, bucket: string, options: ListV2Options) {
  const limit = Math.min(options.limit ?? 1000, 1000);
  const prefix = options.prefix ?? "";
  const delimited = options.with_delimiter === true;
  const cursor = options.cursor ? decodeCursor(options.cursor) : undefined;
  const descending = (cursor?.sortOrder ?? options.sortBy?.order) === "desc";
  const requested = cursor?.sortColumn ?? options.sortBy?.column;
  const column = requested === "created_at" || requested === "updated_at" ? requested : "name";
  const rows = await tx<ListedRow[]>`
    select id, name, metadata, updated_at, created_at, last_accessed_at from storage.objects
    where bucket_id = ${bucket} and starts_with(name, ${prefix})`;

  let entries: Entry[] = [];
  const folders = new Map<string, Entry>();
  for (const row of rows) {
    const slash = delimited ? row.name.indexOf("/", prefix.length) : -1;
    if (slash < 0) {
      entries.push({ ...row, sortKey: row.name, folder: false });
      continue;
    }
    const name = row.name.slice(0, slash);
    const folder = folders.get(name);
    // With timestamp sorting, a folder carries its oldest object's creation time (Storage's search_by_timestamp).
    const stamp = column === "name" ? null : row.created_at;
    if (!folder) {
      folders.set(name, {
        name,
        sortKey: `${name}/`,
        folder: true,
        id: null,
        updated_at: stamp,
        created_at: stamp,
        last_accessed_at: null,
        metadata: null,
      });
    } else if (stamp && folder.created_at && stamp < folder.created_at) {
      folder.created_at = folder.updated_at = stamp;
    }
  }
  entries.push(...folders.values());

  const direction = descending ? -1 : 1;
  const time = (entry: Entry) => (column === "name" ? 0 : entry[column]?.getTime() ?? 0);
  const compare = (a: Entry, b: Entry) => direction * (time(a) - time(b) || byBytes(a.sortKey, b.sortKey));
  entries.sort(compare);
  if (cursor?.startAfter) {
    const after = {
      sortKey: cursor.startAfter,
      [column]: cursor.sortColumnAfter ? new Date(cursor.sortColumnAfter) : new Date(0),
    } as unknown as Entry;
    entries = entries.filter((entry) => compare(entry, after) > 0);
  }

  const hasNext = entries.length > limit;
  const page = entries.slice(0, limit);
  const levels = prefix ? prefix.split("/").length : 1;
  const shape = ({ sortKey: _key, folder, ...entry }: Entry) => ({
    ...entry,
    ...(delimited ? { key: entry.name.split("/")[levels - 1] ?? "" } : {}),
    name: folder ? `${entry.name}/` : entry.name,
  });
  const last = page.at(-1);
  return {
    hasNext,
    ...(hasNext && last
      ? {
        nextCursor: encodeCursor({
          startAfter: last.sortKey,
          sortOrder: cursor?.sortOrder ?? options.sortBy?.order,
          sortColumn: requested,
          sortColumnAfter: column !== "name" ? last[column]?.toISOString() : undefined,
        }),
        nextCursorKey: last.name,
      }
      : {}),
    folders: page.filter((entry) => entry.folder).map(shape),
    objects: page.filter((entry) => !entry.folder).map(shape),
  };
}
