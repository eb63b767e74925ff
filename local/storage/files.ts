// The bytes of the Storage stand-in: one file per object version under
// DATA_DIR/storage/objects/{version}, as Storage's file backend keeps a file
// per version. A name never becomes a path, so no key can reach outside the
// directory. Uploads land in DATA_DIR/storage/.uploads/ first and are moved
// into place only once complete.
export interface StoredObject {
  bucket_id: string;
  name: string;
  version: string | null;
}

export class ObjectFiles {
  constructor(readonly root: string) {}

  /** A fresh path for an upload in progress. */
  async tempPath(): Promise<string> {
    await Deno.mkdir(`${this.root}/.uploads`, { recursive: true });
    return `${this.root}/.uploads/${crypto.randomUUID()}`;
  }

  #versionPath(version: string): string {
    return `${this.root}/objects/${version}`;
  }

  /**
   * Where an object's bytes are. Rows without a version were written by an
   * earlier layout ({bucket}/{name}), which refused names that could escape.
   */
  pathOf(object: StoredObject): string | null {
    if (object.version) return /^[0-9a-f-]{36}$/.test(object.version) ? this.#versionPath(object.version) : null;
    const parts = [object.bucket_id, ...object.name.split("/")];
    if (parts.some((part) => part === "" || part === "." || part === ".." || part.includes("\0"))) return null;
    return `${this.root}/${parts.join("/")}`;
  }

  /** Moves a finished upload into place as `version`. */
  async commit(tempPath: string, version: string): Promise<void> {
    await Deno.mkdir(`${this.root}/objects`, { recursive: true });
    await Deno.rename(tempPath, this.#versionPath(version));
  }

  /** Copies an object's bytes to a new version; false when its file is gone. */
  async copy(source: StoredObject, version: string): Promise<boolean> {
    const from = this.pathOf(source);
    if (!from) return false;
    await Deno.mkdir(`${this.root}/objects`, { recursive: true });
    try {
      await Deno.copyFile(from, this.#versionPath(version));
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  }

  async open(object: StoredObject): Promise<{ file: Deno.FsFile; size: number; mtime: Date | null } | null> {
    const path = this.pathOf(object);
    if (!path) return null;
    try {
      const file = await Deno.open(path, { read: true });
      const info = await file.stat();
      return { file, size: info.size, mtime: info.mtime };
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  }

  /** Removes the bytes of objects no row points at any more (a missing file is fine). */
  async remove(objects: StoredObject[]): Promise<void> {
    for (const object of objects) {
      const path = this.pathOf(object);
      if (path) await Deno.remove(path).catch(() => {});
    }
  }

  async discard(tempPath: string): Promise<void> {
    await Deno.remove(tempPath).catch(() => {});
  }
}
