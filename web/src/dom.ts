/**
 * Elements built node by node, text always as text: nothing from an answer
 * (a URL, a header value, a certificate name) is ever parsed as HTML.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attributes = Readonly<Record<string, string | number | boolean | undefined>>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  return fill(document.createElement(tag), attributes, children);
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): SVGElementTagNameMap[K] {
  return fill(document.createElementNS(SVG_NS, tag), attributes, children);
}

function fill<E extends Element>(element: E, attributes: Attributes, children: readonly Child[]): E {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A definition list of label / value rows, skipping rows without a value. */
export function facts(rows: readonly (readonly [string, Child | readonly Child[]])[]): HTMLDListElement {
  const list = h("dl", { class: "facts" });
  for (const [label, value] of rows) {
    if (value === null || value === undefined || value === false) continue;
    list.append(h("dt", {}, label), h("dd", {}, ...(Array.isArray(value) ? (value as readonly Child[]) : [value as Child])));
  }
  return list;
}

/** A table whose header cells are scoped to their columns, in a wrapper that scrolls sideways on a narrow screen. */
export function table(caption: string, headings: readonly string[], rows: readonly (readonly Child[])[], className = ""): HTMLElement {
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      { class: className || undefined },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, ...headings.map((heading) => h("th", { scope: "col" }, heading)))),
      h("tbody", {}, ...rows.map((cells) => h("tr", {}, ...cells.map((cell) => h("td", {}, cell))))),
    ),
  );
}
