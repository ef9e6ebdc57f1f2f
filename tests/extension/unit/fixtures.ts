/**
 * Fixtures the webview page tests share (stacks, stacksTree, compare): a nonce that passes the
 * pages' check, and the Show Stacks page's words.
 */
import type { StacksLabels } from '../../../extension/src/core/stacksHtml';

/** A nonce for the pages' CSP (at least 16 base64 characters). */
export const NONCE = 'abcdefghijklmnopqrstuv==';

/** The Show Stacks page's words, in English. */
export const STACKS_LABELS: StacksLabels = {
    title: 'Stacks',
    meta: '4 of 4 ranks read',
    refresh: 'Refresh',
    errors: 'Ranks that could not be read',
    noStacks: 'No stack could be read.',
    oddOneOut: 'odd one out',
    idle: 'idle',
    waitingIn: (c) => `waiting in ${c}`,
    thread: (t) => `thread ${t}`,
};
