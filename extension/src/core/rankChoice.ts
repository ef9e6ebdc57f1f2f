/**
 * What the rank quick-pick answers: the ranks debugged from the start (a spec, possibly
 * empty) and whether every rank is armed (`rankdebug launch --arm`: attach, evaluate or
 * read stacks later from Training Jobs). Remembered per command as one string: `1,3`,
 * `arm` (no rank now, every rank armed) or `1,3+arm`; older memories (a bare spec) read as
 * not armed. No `vscode` import: unit-tested as is.
 */

export interface RankChoice {
    /** Ranks debugged from the start (`1,3`, `all`, `local0`); '' for none (armed only). */
    spec: string;
    arm: boolean;
}

const SPEC_PART = /^(all|local\d+|\d+(\s*-\s*\d+)?)$/i;

/** A rank spec's syntax (`0`, `1,3`, `0-3,8`, `all`, `local0`), without the job's ranks. */
export function isSpecText(text: string): boolean {
    const parts = text.split(',').map((p) => p.trim());
    return parts.length > 0 && parts.every((p) => SPEC_PART.test(p));
}

/** The remembered form of a choice. */
export function formatChoice(choice: RankChoice): string {
    const spec = choice.spec.trim();
    if (!choice.arm) return spec;
    return spec ? `${spec}+arm` : 'arm';
}

/**
 * A choice typed or remembered: a spec, `arm`, or both (`1,3+arm`, `1,3 arm`, `arm 1`);
 * undefined when it names nothing or is malformed.
 * Steps: split off the `arm` word (also `--arm`); the rest, if any, must be a spec.
 */
export function parseChoice(text: string | undefined): RankChoice | undefined {
    if (text === undefined) return undefined;
    let arm = false;
    const rest: string[] = [];
    for (const word of text.trim().split(/[\s+]+/).filter(Boolean)) {
        if (/^(--)?arm(ed)?$/i.test(word)) arm = true;
        else rest.push(word);
    }
    const spec = rest.join(' ').replace(/\s*([,-])\s*/g, '$1').replace(/,+$/, '');
    if (!spec) return arm ? { spec: '', arm } : undefined;
    if (!isSpecText(spec)) return undefined;
    return { spec, arm };
}

/** The debug session's name: `torchrun train.py · ranks 1`, `… · ranks 1 · armed`, `… · armed`. */
export function choiceName(title: string, choice: RankChoice): string {
    const parts = [title];
    if (choice.spec) parts.push(`ranks ${choice.spec}`);
    if (choice.arm) parts.push('armed');
    return parts.join(' · ');
}

/** What `rankdebug.debugPlan` is asked for: `ranks` (default rank 0 unless armed) and `arm`. */
export function debugPlanRanks(spec: string | undefined, arm: boolean): { ranks: string; arm?: true } {
    if (!arm) return { ranks: spec ?? '0' };
    return { ranks: spec ?? '', arm: true };
}
