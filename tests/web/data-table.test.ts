// The panel's one data table (web/src/components/ui/table/DataTable.tsx), rendered to HTML: the markup the phone
// layout (`table.cards` in styles.css: each cell labelled by its `data-label`) and the browser journeys (roles and
// names) rely on. small-screens.spec.ts measures the pages themselves at 320 px.
import { createContext, createElement, type ReactNode, useContext } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { type Column, DataTable } from "../../web/src/components/ui/table/index.ts";

type Item = { id: string; name: string; late: boolean };
const items: Item[] = [{ id: "a", name: "Ana", late: true }, { id: "b", name: "Bia", late: false }];
const columns: Column<Item>[] = [
  { header: "Nome", cell: (item) => item.name },
  { header: "Código", className: "code", cell: (item) => item.id },
  { header: "Ações", hiddenHeader: true, className: "row-actions", cell: (item) => `editar ${item.name}` },
];
const html = (props: Parameters<typeof DataTable<Item>>[0]) =>
  renderToStaticMarkup(createElement(DataTable<Item>, props));

describe("DataTable", () => {
  it("is a card table whose cells carry their column's name, the header of a column of buttons hidden", () => {
    const out = html({ columns, items, itemKey: (i) => i.id, caption: "Pessoas" });
    expect(out).toMatch(/^<table class="cards">/);
    expect(out).toContain('<caption class="sr-only">Pessoas</caption>');
    expect(out).toContain('<th scope="col">Nome</th><th scope="col">Código</th>');
    expect(out).toContain('<th scope="col"><span class="sr-only">Ações</span></th>');
    expect(out).toContain('<td data-label="Nome">Ana</td><td data-label="Código" class="code">a</td>');
    expect(out).toContain('<td class="row-actions">editar Ana</td>');
    expect(out.match(/<tr>/g)).toHaveLength(3);
  });

  it("leaves out a column given as false, classes rows, names itself by aria-label, and says when it is empty", () => {
    const out = html({
      columns: [columns[0], false, { ...columns[1], unlabelled: true }],
      items,
      itemKey: (i) => i.id,
      label: "Tentativas",
      className: "candidates",
      rowClassName: (i) => (i.late ? "late" : undefined),
    });
    expect(out).toMatch(/^<table class="cards candidates" aria-label="Tentativas">/);
    expect(out).toContain('<tr class="late"><td data-label="Nome">Ana</td><td class="code">a</td></tr>');
    expect(out).not.toContain("Ações");
    const empty = html({ columns, items: [], itemKey: (i) => i.id, empty: "Ninguém ainda." });
    expect(empty).toContain('<tbody><tr><td colSpan="3">Ninguém ainda.</td></tr></tbody>');
    expect(html({ columns, items: [], itemKey: (i) => i.id })).toContain("<tbody></tbody>");
  });

  it("wraps each row in Row, so that a row's cells share its state", () => {
    const RowName = createContext("");
    const Row = ({ item, children }: { item: Item; children: ReactNode }) =>
      createElement(RowName.Provider, { value: `row of ${item.name}` }, children);
    const Shared = () => useContext(RowName);
    const out = html({
      columns: [{ header: "Estado", cell: () => createElement(Shared) }],
      items,
      itemKey: (i) => i.id,
      Row,
    });
    expect(out).toContain('<td data-label="Estado">row of Ana</td>');
    expect(out).toContain('<td data-label="Estado">row of Bia</td>');
  });
});
