import * as assert from 'node:assert/strict';
import { parseHangEvent, type HangEvent } from '../../../../extension/src/core/hangEvents';
import { HangNotices, type NoticeHost } from '../../../../extension/src/diagnose/hangNotices';
import { l10n } from '../debug/fakes';

/** A notice host that records what is shown and run; each warning waits for `answer(i, button)`. */
class FakeNotices implements NoticeHost {
    readonly l10n = l10n;
    readonly warnings: { message: string; actions: string[]; answer: (choice: string | undefined) => void }[] = [];
    readonly infos: string[] = [];
    readonly ran: string[] = [];
    readonly logged: string[] = [];

    showWarning(message: string, ...actions: string[]): Thenable<string | undefined> {
        return new Promise((resolve) => this.warnings.push({ message, actions, answer: resolve }));
    }
    showInfo(message: string): void {
        this.infos.push(message);
    }
    whyStuck(job: string | null): void {
        this.ran.push(`whyStuck ${job}`);
    }
    debugRank(job: string | null, rank: number): void {
        this.ran.push(`debugRank ${job} ${rank}`);
    }
    log(message: string): void {
        this.logged.push(message);
    }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

const HANG_LINE = JSON.stringify({
    event: 'hang',
    job: 'J1',
    seconds: 121.4,
    why: 'no rank has made progress for 121 s',
    culprits: [{ ranks: [3, 5], why: 'rank 3 never reached all_reduce #12', where: { file: '/p/train.py', line: 40, function: 'step' } }],
});

function hang(line = HANG_LINE): HangEvent {
    const ev = parseHangEvent(line);
    assert.equal(ev?.event, 'hang');
    return ev as HangEvent;
}

describe('core/hangEvents', () => {
    it('reads hang and hang_over lines, and nothing else', () => {
        const ev = hang();
        assert.deepEqual(ev, {
            event: 'hang',
            job: 'J1',
            seconds: 121.4,
            why: 'no rank has made progress for 121 s',
            culprits: [{ ranks: [3, 5], why: 'rank 3 never reached all_reduce #12', where: { file: '/p/train.py', line: 40, function: 'step' } }],
        });
        assert.deepEqual(parseHangEvent('{"event": "hang_over", "job": "J1", "seconds": 130}'), { event: 'hang_over', job: 'J1', seconds: 130 });
        assert.equal(parseHangEvent('{"event": "listening", "rank": 1, "port": 5678}'), undefined);
        assert.equal(parseHangEvent('step 3: hang on, loss 0.3'), undefined);
        assert.equal(parseHangEvent('{"event": "hang", '), undefined);
        assert.equal(parseHangEvent('{"why": "hang"}'), undefined);
    });

    it('takes wrong types as missing', () => {
        assert.deepEqual(parseHangEvent('{"event": "hang", "job": 7, "seconds": "x", "culprits": [null, {"ranks": ["a", 2, -1], "where": 3}]}'), {
            event: 'hang',
            job: '7',
            seconds: null,
            why: '',
            culprits: [{ ranks: [2], why: '', where: null }],
        });
    });
});

describe('diagnose/hangNotices', () => {
    it('warns once per hang with the first culprit and both buttons; Debug rank attaches to it', async () => {
        const host = new FakeNotices();
        const notices = new HangNotices(host);
        notices.hang(hang());
        notices.hang(hang());
        assert.equal(host.warnings.length, 1);
        assert.equal(host.warnings[0].message, 'Training job looks stuck: rank 3 never reached all_reduce #12');
        assert.deepEqual(host.warnings[0].actions, ['Why Is This Job Stuck?', 'Debug rank 3']);
        host.warnings[0].answer('Debug rank 3');
        await tick();
        assert.deepEqual(host.ran, ['debugRank J1 3']);
        assert.equal(notices.showing('J1'), false);
        // Still the same hang (no hang_over yet): nothing new.
        notices.hang(hang());
        assert.equal(host.warnings.length, 1);
    });

    it('offers no Debug button without a culprit rank; Why Is This Job Stuck? runs on the job', async () => {
        const host = new FakeNotices();
        const notices = new HangNotices(host);
        notices.hang(hang('{"event": "hang", "job": "J2", "seconds": 120, "why": "no rank has made progress for 120 s", "culprits": []}'));
        assert.equal(host.warnings[0].message, 'Training job looks stuck: no rank has made progress for 120 s');
        assert.deepEqual(host.warnings[0].actions, ['Why Is This Job Stuck?']);
        host.warnings[0].answer('Why Is This Job Stuck?');
        await tick();
        assert.deepEqual(host.ran, ['whyStuck J2']);
    });

    it('says the job moved on when hang_over comes while the warning is up, and warns again at the next hang', async () => {
        const host = new FakeNotices();
        const notices = new HangNotices(host);
        notices.hang(hang());
        assert.equal(notices.showing('J1'), true);
        const over = parseHangEvent('{"event": "hang_over", "job": "J1", "seconds": 150.2}');
        assert.equal(over?.event, 'hang_over');
        if (over?.event === 'hang_over') notices.hangOver(over);
        assert.deepEqual(host.infos, ['The training job J1 moved on after 150 s stuck.']);
        assert.equal(notices.showing('J1'), false);
        // The old warning closed without a click: nothing runs.
        host.warnings[0].answer(undefined);
        await tick();
        assert.deepEqual(host.ran, []);
        notices.hang(hang());
        assert.equal(host.warnings.length, 2);
    });

    it('says nothing at hang_over once the warning was answered, and keeps jobs apart', async () => {
        const host = new FakeNotices();
        const notices = new HangNotices(host);
        notices.hang(hang());
        notices.hang(hang(HANG_LINE.replace('"J1"', '"J9"')));
        assert.equal(host.warnings.length, 2);
        host.warnings[0].answer(undefined);
        await tick();
        notices.hangOver({ event: 'hang_over', job: 'J1', seconds: 200 });
        assert.deepEqual(host.infos, []);
        assert.equal(notices.showing('J9'), true);
    });
});
