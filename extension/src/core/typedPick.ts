/**
 * A quick-pick that also takes typed text (a rank spec, a selector) checked as you type: what
 * the rank picks share (launch/rankQuickPick.ts, launch/unknownRankPick.ts, jobs/attachPick.ts).
 * The title says what Enter takes for the text, or why it takes nothing (a quick-pick has no
 * validation message of its own); Enter is answered one at a time, the pick busy while the
 * answer is awaited; hidden, the pick answers undefined and is disposed. No `vscode` import:
 * the pick is the few members of a `vscode.QuickPick` it drives.
 */
import { debounce } from './debounce';

/** The members of a `vscode.QuickPick` the typed pick drives. */
export interface PickView {
    title: string | undefined;
    readonly value: string;
    busy: boolean;
    show(): void;
    hide(): void;
    dispose(): void;
    onDidChangeValue(listener: (text: string) => unknown): unknown;
    onDidAccept(listener: () => unknown): unknown;
    onDidHide(listener: () => unknown): unknown;
}

/** What Enter makes of the pick: a result (the pick closes with it), words for the title (it stays open), or nothing yet. */
export type Answer<R> = { take: R } | { say: string } | undefined;

export interface TypedPickSpec<R> {
    /** The title without a hint. */
    title: string;
    /** How long typing pauses before the text is checked (ms). */
    delayMs: number;
    /** The title's hint for `text` (not blank): what Enter takes, or why it takes nothing; '' for none. */
    hint(text: string): Promise<string>;
    /** Enter. An answer still to come marks the pick busy; a failure is said in the title. */
    accept(): Answer<R> | Promise<Answer<R>>;
}

function said(e: unknown): string {
    return e instanceof Error ? e.message : String(e);
}

/**
 * Shows `qp` (its items set by the caller) until Enter takes an answer or it is hidden; the
 * answer, or undefined. A hint comes only for the text still typed, and none once hidden.
 */
export function runTypedPick<R>(qp: PickView, spec: TypedPickSpec<R>): Promise<R | undefined> {
    let closed = false;
    let accepting = false;
    const setHint = (hint: string): void => {
        if (!closed) qp.title = hint ? `${spec.title} — ${hint}` : spec.title;
    };
    const hint = debounce(
        async (text: string) => {
            const words = text.trim() ? await spec.hint(text).catch(() => '') : '';
            if (qp.value === text) setHint(words);
        },
        spec.delayMs,
        undefined,
    );
    qp.title = spec.title;
    return new Promise<R | undefined>((resolve) => {
        let done = false;
        const finish = (result: R | undefined): void => {
            if (done) return;
            done = true;
            qp.hide();
            resolve(result);
        };
        const accept = async (): Promise<void> => {
            if (accepting) return;
            accepting = true;
            try {
                const pending = spec.accept();
                let answer: Answer<R>;
                if (pending instanceof Promise) {
                    qp.busy = true;
                    answer = await pending.finally(() => (qp.busy = false));
                } else {
                    answer = pending;
                }
                if (answer && 'take' in answer) finish(answer.take);
                else if (answer) setHint(answer.say);
            } catch (e) {
                setHint(said(e));
            } finally {
                accepting = false;
            }
        };
        qp.onDidChangeValue((text) => void hint(text));
        qp.onDidAccept(() => void accept());
        qp.onDidHide(() => {
            closed = true;
            finish(undefined);
            qp.dispose();
        });
        qp.show();
    });
}
