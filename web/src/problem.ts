import { Code, ConnectError } from "@connectrpc/connect";
import { type Credits, creditsOf } from "./credits.js";
import { waitWords } from "../../src/shared/wait-words.js";
import { formatDate } from "./format.js";

/** An answer that is not a result, as the page explains it. */
export interface Problem {
  /** One line saying what happened, with its HTTP status. */
  readonly title: string;
  /** What to do about it, or the service's own explanation. */
  readonly detail: string;
  /** The HTTP status the REST door would answer (0 when the service was not reached). */
  readonly httpStatus: number;
}

/** The four refusals people meet (401, 429, 400, 503), and anything else as it came. */
export function problemOf(error: unknown): { readonly problem: Problem; readonly credits: Credits | undefined } {
  const connectError = ConnectError.from(error);
  const credits = creditsOf(connectError.metadata);
  const said = connectError.rawMessage;
  switch (connectError.code) {
    case Code.Unauthenticated:
      return {
        problem: {
          title: "401: the API key was not accepted",
          detail: `Check the key (it starts with sd_), or ask for one (sitediag keys create). The service said: ${said}`,
          httpStatus: 401,
        },
        credits,
      };
    case Code.ResourceExhausted: {
      const wait = credits?.retryAfterSeconds;
      // No Retry-After: no wait helps (the call costs more than the whole budget), and the service's message says so.
      // Then only the operator can help: the key's own budget is raised on the server, with the command docs/credits.md names.
      const when =
        wait === undefined
          ? ` Waiting will not help: an operator can raise this key's budget on the server (sitediag keys set-budget KEY_ID N; keys list shows the id), or run fewer items at once.`
          : ` Try again after ${formatDate(new Date(Date.now() + wait * 1000))} (in ${waitWords(wait)}).`;
      return { problem: { title: "429: not enough credits left", detail: `${sentence(said)}${when}`, httpStatus: 429 }, credits };
    }
    case Code.InvalidArgument:
      return { problem: { title: "400: the request was refused", detail: said, httpStatus: 400 }, credits };
    case Code.Unavailable:
      // The service's own message says when to retry (the in-flight cap names its Retry-After; an unreachable store says "shortly").
      return { problem: { title: "503: the service is unavailable", detail: sentence(said), httpStatus: 503 }, credits };
    case Code.Unknown:
    case Code.Internal:
      return { problem: { title: "The service failed to answer", detail: said, httpStatus: 500 }, credits };
    // The rest as they came; so is a code this page does not know (a newer server's).
    case Code.Canceled:
    case Code.DeadlineExceeded:
    case Code.NotFound:
    case Code.AlreadyExists:
    case Code.PermissionDenied:
    case Code.FailedPrecondition:
    case Code.Aborted:
    case Code.OutOfRange:
    case Code.Unimplemented:
    case Code.DataLoss:
    default:
      return { problem: { title: `The call failed (${Code[connectError.code]})`, detail: said, httpStatus: 0 }, credits };
  }
}

/** The service's message as a sentence: a full stop unless it already ends in one. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
