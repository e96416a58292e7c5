/**
 * A call in flight, as the page shows it: the time it has taken so far,
 * ticking (outside the status region, so a screen reader hears the start and
 * the end, not every tenth of a second), and a Cancel button, Escape too,
 * that aborts it.
 */
export interface Progress {
  /** Aborted by Cancel or Escape. */
  readonly signal: AbortSignal;
  /** Stops the clock and the button; the time taken, as shown. */
  finish(): string;
}

export function startProgress(elapsed: HTMLElement, cancel: HTMLButtonElement): Progress {
  const started = performance.now();
  const controller = new AbortController();
  const show = () => (elapsed.textContent = secondsText(performance.now() - started));
  show();
  const tick = window.setInterval(show, 100);
  const abort = () => controller.abort();
  const onKey = (event: KeyboardEvent) => {
    if (event.key === "Escape") abort();
  };
  cancel.hidden = false;
  cancel.addEventListener("click", abort);
  document.addEventListener("keydown", onKey);
  return {
    signal: controller.signal,
    finish: () => {
      window.clearInterval(tick);
      cancel.removeEventListener("click", abort);
      document.removeEventListener("keydown", onKey);
      // Moving focus off a button about to vanish keeps the keyboard where the reader was.
      if (document.activeElement === cancel) cancel.blur();
      cancel.hidden = true;
      return show();
    },
  };
}

function secondsText(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
