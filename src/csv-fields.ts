/**
 * The fields of one CSV line (RFC 4180 quoting: a field may be double-quoted,
 * "" inside quotes is a quote, so a URL holding a comma survives); undefined
 * when a quote is left open. Pure and dependency-free: the CLI's batch files
 * and the page's pasted batches read their lines with this one function.
 */
export function csvFields(line: string): string[] | undefined {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field.trim() === "") {
      quoted = true;
      field = "";
    } else if (char === ",") {
      fields.push(field);
      field = "";
    } else field += char;
  }
  if (quoted) return undefined;
  fields.push(field);
  return fields;
}
