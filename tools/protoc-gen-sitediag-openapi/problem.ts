/**
 * Something in the proto the REST contract has no rendering for. Collected as
 * values so one run reports every offending element at once, then handed to
 * buf through CodeGeneratorResponse.error instead of a guessed schema.
 */
export interface Problem {
  /** Fully qualified name of the proto element, e.g. "sitediag.v1.ChainHop.hop". */
  readonly element: string;
  /** Which rule of the plugin the element breaks. */
  readonly rule: "unsupported-http-rule" | "unsupported-field-kind" | "enum-value-without-rest-value" | "missing-version-in-package";
  readonly reason: string;
}

export function describeProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.element}: ${p.reason} [${p.rule}]`).join("\n");
}
