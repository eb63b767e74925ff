// Large CSV files for the import's tests (tests/api/deliveries/import-job*.test.ts, tests/e2e/operations.spec.ts).

/**
 * `rows` rows with coordinates, every third without an external_id (only its note, `<tag> linha <i>`, tells it);
 * the first `refused` rows have a window already over, which the import refuses.
 */
export function largeFile(tag: string, rows: number, refused = 0): string {
  const lines = [
    "origin_address,origin.lat,origin.lng,destination_address,destination.lat,destination.lng,notes," +
    "external_id,window_end",
  ];
  for (let i = 0; i < rows; i++) {
    const lat = (-23.55 - (i % 50) * 0.001).toFixed(4);
    const windowEnd = i < refused ? "2020-01-01T10:00:00-03:00" : "";
    lines.push(
      `Praça da Sé,-23.5505,-46.6333,Rua ${i},${lat},-46.6559,${tag} linha ${i},${
        i % 3 === 0 ? "" : `${tag}-${i}`
      },${windowEnd}`,
    );
  }
  return lines.join("\n") + "\n";
}
