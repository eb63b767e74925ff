// Decoding pgoutput, Postgres's built-in logical decoding output (protocol
// version 1, "Logical Replication Message Formats" in the Postgres manual),
// into the row changes Realtime's postgres_changes carries: each insert,
// update and delete of a published table with its columns as text, the old
// key (or, with REPLICA IDENTITY FULL, the old row) and its commit time.
// Pure functions; no I/O.

export interface RelationColumn {
  name: string;
  typeoid: number;
  /** Part of the table's replica identity (its primary key by default). */
  key: boolean;
}

export interface Relation {
  relid: number;
  schema: string;
  table: string;
  columns: RelationColumn[];
}

export interface ColumnValue {
  name: string;
  typeoid: number;
  /** The value as Postgres writes it in text, or null for NULL. */
  value: string | null;
}

export interface RowChange {
  relid: number;
  schema: string;
  table: string;
  action: "INSERT" | "UPDATE" | "DELETE";
  /** When the transaction committed, as Realtime writes it: YYYY-MM-DDTHH:MM:SS.mmmZ. */
  commit_timestamp: string;
  /** The new row (an unchanged TOASTed value is left out, as wal2json leaves it out). */
  columns: ColumnValue[];
  /** The replica identity of the old row: its key, or the whole row with REPLICA IDENTITY FULL. */
  old_columns: ColumnValue[] | null;
}

/** Relations seen so far, by OID: pgoutput describes a relation before its first change in a decoding session. */
export type RelationCache = Map<number, Relation>;

const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);
const decoder = new TextDecoder();

class Reader {
  offset = 0;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  byte(): number {
    return this.view.getUint8(this.offset++);
  }
  int16(): number {
    const value = this.view.getInt16(this.offset);
    this.offset += 2;
    return value;
  }
  int32(): number {
    const value = this.view.getInt32(this.offset);
    this.offset += 4;
    return value;
  }
  uint32(): number {
    const value = this.view.getUint32(this.offset);
    this.offset += 4;
    return value;
  }
  int64(): bigint {
    const value = this.view.getBigInt64(this.offset);
    this.offset += 8;
    return value;
  }
  string(): string {
    const end = this.bytes.indexOf(0, this.offset);
    const value = decoder.decode(this.bytes.subarray(this.offset, end));
    this.offset = end + 1;
    return value;
  }
  text(length: number): string {
    const value = decoder.decode(this.bytes.subarray(this.offset, this.offset + length));
    this.offset += length;
    return value;
  }
}

function tuple(reader: Reader, relation: Relation): ColumnValue[] {
  const count = reader.int16();
  const values: ColumnValue[] = [];
  for (let i = 0; i < count; i++) {
    const kind = String.fromCharCode(reader.byte());
    const column = relation.columns[i];
    if (kind === "n") values.push({ name: column.name, typeoid: column.typeoid, value: null });
    else if (kind === "t" || kind === "b") {
      const value = reader.text(reader.int32());
      values.push({ name: column.name, typeoid: column.typeoid, value });
    }
    // "u": an unchanged TOASTed value, not sent.
  }
  return values;
}

/** The key columns of a row (what the old row's identity is when pgoutput sends no old tuple). */
function keyOf(values: ColumnValue[], relation: Relation): ColumnValue[] {
  const keys = new Set(relation.columns.filter((c) => c.key).map((c) => c.name));
  return values.filter((value) => keys.has(value.name));
}

export interface DecodeState {
  relations: RelationCache;
  /** The commit time of the transaction being decoded. */
  commitTimestamp: string;
}

/**
 * Decodes one pgoutput message; returns the row change it carries, if any.
 * Messages of other kinds (begin, relation, commit) update `state`.
 */
export function decodeMessage(message: Uint8Array, state: DecodeState): RowChange | null {
  const reader = new Reader(message);
  const kind = String.fromCharCode(reader.byte());
  switch (kind) {
    case "B": {
      reader.int64(); // final LSN
      const micros = reader.int64();
      state.commitTimestamp = new Date(POSTGRES_EPOCH_MS + Number(micros / 1000n)).toISOString();
      return null;
    }
    case "R": {
      const relid = reader.uint32();
      const schema = reader.string() || "pg_catalog";
      const table = reader.string();
      reader.byte(); // replica identity setting
      const count = reader.int16();
      const columns: RelationColumn[] = [];
      for (let i = 0; i < count; i++) {
        const flags = reader.byte();
        const name = reader.string();
        const typeoid = reader.uint32();
        reader.int32(); // type modifier
        columns.push({ name, typeoid, key: (flags & 1) === 1 });
      }
      state.relations.set(relid, { relid, schema, table, columns });
      return null;
    }
    case "I":
    case "U":
    case "D": {
      const relation = state.relations.get(reader.uint32());
      if (!relation) return null;
      const change = {
        relid: relation.relid,
        schema: relation.schema,
        table: relation.table,
        commit_timestamp: state.commitTimestamp,
      };
      if (kind === "I") {
        reader.byte(); // "N"
        return { ...change, action: "INSERT", columns: tuple(reader, relation), old_columns: null };
      }
      let marker = String.fromCharCode(reader.byte());
      let old: ColumnValue[] | null = null;
      if (marker === "K" || marker === "O") {
        old = tuple(reader, relation);
        if (kind === "D") return { ...change, action: "DELETE", columns: [], old_columns: old };
        marker = String.fromCharCode(reader.byte()); // "N"
      }
      const columns = tuple(reader, relation);
      // Without an old tuple (the key did not change), the old row's identity is the new row's key, as wal2json gives it.
      return { ...change, action: "UPDATE", columns, old_columns: old ?? keyOf(columns, relation) };
    }
    default:
      // "C" commit, "O" origin, "Y" type, "T" truncate (which postgres_changes does not carry), "M" message.
      return null;
  }
}
