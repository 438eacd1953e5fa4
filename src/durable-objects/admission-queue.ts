/**
 * Requests waiting inside a budget object (KeyState, OrgCredits) for in-flight reservations to
 * settle: first come, first decided; each waits at most its bound. The owner calls `pump()`
 * after anything that frees budget or changes the rules (settlement, cancel, sync).
 */
export type Decision<R> = R | "wait";

interface Entry<R> {
  decide: () => Decision<R>;
  resolve: (r: R) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class AdmissionQueue<R> {
  private entries: Array<Entry<R>> = [];

  get length(): number {
    return this.entries.length;
  }

  /** Waits until `decide` answers (in order of arrival) or `waitMs` passes (`onTimeout`). */
  wait(decide: () => Decision<R>, waitMs: number, onTimeout: () => R): Promise<R> {
    return new Promise<R>((resolve) => {
      const entry: Entry<R> = {
        decide,
        resolve,
        timer: setTimeout(() => {
          const i = this.entries.indexOf(entry);
          if (i < 0) return;
          this.entries.splice(i, 1);
          resolve(onTimeout());
          // The head that timed out may have been what held the others back.
          this.pump();
        }, waitMs),
      };
      this.entries.push(entry);
    });
  }

  /** Decides waiting requests, oldest first, until one still has to wait. */
  pump(): void {
    while (this.entries.length > 0) {
      const head = this.entries[0]!;
      const r = head.decide();
      if (r === "wait") return;
      this.entries.shift();
      clearTimeout(head.timer);
      head.resolve(r);
    }
  }
}
