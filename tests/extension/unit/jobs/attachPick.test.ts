import * as assert from 'node:assert/strict';
import { CHECK_DELAY_MS } from '../../../../extension/src/core/rankCheck';
import { pickAttachRanks } from '../../../../extension/src/jobs/attachPick';
import { fakeChecks, ranksReply, tick } from '../launch/fakes';
import { FakeRoomHost, job, rank } from './fakes';

/** Four ranks on two hosts as dp 2 × tp 2. */
const RANKS = [0, 1, 2, 3].map((r) => rank(r, { host: r < 2 ? 'gpu-a' : 'gpu-b', localRank: r % 2, coords: { dp: Math.floor(r / 2), tp: r % 2 } }));
const JOB = job(RANKS);

function server(): ReturnType<typeof fakeChecks> {
    return fakeChecks({
        'tp=0': ranksReply([0, 2]),
        '3': ranksReply([3]),
        '0': ranksReply([0]),
    });
}

describe('jobs/attachPick', () => {
    it("shows the offered ranks with their node and coordinates, checked when they wait for a debugger", () => {
        const host = new FakeRoomHost();
        void pickAttachRanks(host, JOB, RANKS.slice(1), true, server().execute);
        const qp = host.pick;
        assert.equal(qp.title, 'Attach to which ranks?');
        assert.deepEqual(
            qp.items.map((i) => [i.label, i.description]),
            [
                ['rank 1 · node 0 · dp 0 · tp 1', 'local 1 · pid 1001'],
                ['rank 2 · node 1 · dp 1 · tp 0', 'local 0 · pid 1002'],
                ['rank 3 · node 1 · dp 1 · tp 1', 'local 1 · pid 1003'],
            ],
        );
        assert.equal(qp.checked().length, 3);
        assert.match(qp.placeholder ?? '', /coordinates like/);
        void pickAttachRanks(host, JOB, RANKS, false, server().execute);
        assert.deepEqual(host.pick.checked(), []);
    });

    it("takes the offered ranks a typed selector names, as the server reads it against the job's coordinates", async () => {
        const host = new FakeRoomHost();
        const { execute, asked } = server();
        const answer = pickAttachRanks(host, JOB, RANKS.slice(1), false, execute);
        host.pick.type('tp=0');
        await tick(CHECK_DELAY_MS + 50);
        assert.equal(host.pick.title, 'Attach to which ranks? — Enter: ranks 2', 'rank 0 is not offered');
        assert.deepEqual(asked[0].coords, { dims: { dp: 2, tp: 2 }, ranks: [{ dp: 0, tp: 0 }, { dp: 0, tp: 1 }, { dp: 1, tp: 0 }, { dp: 1, tp: 1 }] });
        await host.pick.enter();
        assert.deepEqual(
            (await answer)?.map((r) => r.rank),
            [2],
        );
    });

    it('says why a typed text takes nothing, and leaves the checked rows to a text that filters them', async () => {
        const host = new FakeRoomHost();
        const answer = pickAttachRanks(host, JOB, RANKS.slice(1), false, server().execute);
        const qp = host.pick;
        qp.type('0');
        await qp.enter();
        assert.equal(qp.title, 'Attach to which ranks? — 0 names ranks 0: none of them can be attached now.');
        qp.type('node 1');
        await qp.enter();
        assert.equal(qp.hidden, false, 'a filter with nothing checked takes nothing');
        qp.check('rank 3 · node 1 · dp 1 · tp 1');
        await qp.enter();
        assert.deepEqual(
            (await answer)?.map((r) => r.rank),
            [3],
        );
    });

    it('takes only rank numbers without the language server, and the checked rows on Enter', async () => {
        const host = new FakeRoomHost();
        const answer = pickAttachRanks(host, JOB, RANKS, true, undefined);
        const qp = host.pick;
        qp.type('tp=0');
        await qp.enter();
        assert.equal(qp.title, 'Attach to which ranks? — Type a rank number or a range; choosing by coordinates needs the language server.');
        qp.type('');
        qp.check('rank 0 · node 0 · dp 0 · tp 0', 'rank 2 · node 1 · dp 1 · tp 0');
        await qp.enter();
        assert.deepEqual(
            (await answer)?.map((r) => r.rank),
            [0, 2],
        );
    });
});
