/** Debouncing an asynchronous check (input validation while typing). No `vscode` import. */

/**
 * `fn` debounced: each call waits `ms` for a later one. A call overtaken by a later one
 * resolves to `stale` without calling `fn` (its value is no longer the input's); the last
 * call gets `fn`'s answer.
 */
export function debounce<A, R>(fn: (arg: A) => Promise<R>, ms: number, stale: R): (arg: A) => Promise<R> {
    let pending: { timer: ReturnType<typeof setTimeout>; resolve: (value: R) => void } | undefined;
    return (arg: A) =>
        new Promise<R>((resolve, reject) => {
            if (pending) {
                clearTimeout(pending.timer);
                pending.resolve(stale);
            }
            const timer = setTimeout(() => {
                pending = undefined;
                fn(arg).then(resolve, reject);
            }, ms);
            pending = { timer, resolve };
        });
}
