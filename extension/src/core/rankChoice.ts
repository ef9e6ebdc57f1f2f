/**
 * What the rank quick-pick answers: the ranks debugged from the start (a spec, possibly
 * empty) and whether every rank is armed (`rankdebug launch --arm`: attach, evaluate or
 * read stacks later from Training Jobs). Remembered per command as one string: `1,3`,
 * `arm` (no rank now, every rank armed) or `1,3+arm`, which the language server reads back
 * (`rankdebug.checkRanks`, core/rankCheck.ts); older memories (a bare spec) read as not armed.
 * *Choose when the ranks start* (`live`: the job runs armed and the ranks are picked as they
 * start) is not remembered: it asks again. No `vscode` import: unit-tested as is.
 */

export interface RankChoice {
    /** Ranks debugged from the start (`1,3`, `all`, `local0`); '' for none (armed only). */
    spec: string;
    arm: boolean;
    /** Choose when the ranks start: armed, with a pick that fills as ranks start (startedRankPick.ts). */
    live?: boolean;
}

/** The remembered form of a choice. */
export function formatChoice(choice: RankChoice): string {
    const spec = choice.spec.trim();
    if (!choice.arm) return spec;
    return spec ? `${spec}+arm` : 'arm';
}

/**
 * The debug session's name: `train.py · ranks 1`, `… · ranks 1 · armed`, `… · armed`,
 * `… · ranks as they start`; `title` is the server's (`rankdebug.plan` → `title`), as in the
 * compound it names `title · ranks SPEC`.
 */
export function choiceName(title: string, choice: RankChoice): string {
    const parts = [title];
    if (choice.spec) parts.push(`ranks ${choice.spec}`);
    if (choice.live) parts.push('ranks as they start');
    else if (choice.arm) parts.push('armed');
    return parts.join(' · ');
}
