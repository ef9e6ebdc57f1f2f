// End-to-end scenario `ray` (run.mjs runs it; RANKDEBUG_E2E_ONLY=ray alone):
//   Ray: a breakpoint in ray_worker.py (a Ray actor's method) → right-click ray.sh (a driver
//   whose rank count is not known: the input box) → `1,2` → both actor ranks paused in the
//   Call Stack, no other rank with a session → stop → no process of the job left (raylet and
//   GCS included); each actor rank's session is labelled with its role (`rank 1 · actor/rollout/ref`);
import * as fs from 'node:fs';
import * as path from 'node:path';
import { say, processes, jobProcesses, waitFor, shot, openFile, setBreakpoint, commandLine, stopDebugging, rowMenu, rankSubtrees } from '../helpers.mjs';

/** Live processes carrying a job id whose command line matches `re`, wherever their cwd is. */
function jobProcessesNamed(re) {
    return processes(({ cmd, env, zombie }) => !zombie && re.test(cmd) && env.includes('RANKDEBUG_JOB='));
}

/**
 * A Ray driver (ray.sh): its rank count is not known, so the editor asks for ranks as text;
 * `1,2` → both actor ranks paused at a breakpoint in the actor's code, each a `rank N`
 * session labelled with its role (`rank 1 · actor/rollout/ref`) → stop → nothing of the job left, the Ray cluster it started included.
 */
export async function scenarioRay(page, ws) {
    say('ray: a breakpoint in the actor\'s code, then right-click ray.sh');
    const py = fs.readFileSync(path.join(ws, 'ray_worker.py'), 'utf8').split('\n');
    const bp = py.findIndex((l) => l.includes('# BREAK')) + 1;
    await openFile(page, 'ray_worker.py');
    await setBreakpoint(page, bp);
    const line = await commandLine(page, 'ray.sh', 'python ray_trainer.py');
    await rowMenu(page, line, 'Debug Training Command');
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'not known here' }).waitFor({ timeout: 30000 });
    await input.fill('1,2');
    const tEnter = Date.now();
    await page.keyboard.press('Enter');
    let stacks;
    await waitFor('ranks 1 and 2 paused in the Call Stack', async () => {
        stacks = await rankSubtrees(page);
        return /Paused/i.test(stacks[1] ?? '') && /Paused/i.test(stacks[2] ?? '');
    }, 180000).catch((e) => {
        throw new Error(`${e.message}; Call Stack: ${JSON.stringify(stacks)}`);
    });
    const pausedMs = Date.now() - tEnter;
    if (stacks[0] !== undefined || stacks[3] !== undefined) throw new Error(`only ranks 1 and 2 were picked: ${JSON.stringify(stacks)}`);
    const cluster = jobProcessesNamed(/raylet|gcs_server/);
    if (!cluster.length) throw new Error('the job\'s Ray cluster (raylet, GCS) is not running under the job');
    say(`ranks 1 and 2 paused ${pausedMs} ms after the answer: ${JSON.stringify(stacks)}`);
    // Each actor rank's session is labelled with its role (the actor's class, as verl names it).
    await waitFor('ranks 1 and 2 labelled with their actor role', async () => {
        const rows = await page.locator('.debug-call-stack .monaco-list-row').allInnerTexts();
        return [1, 2].every((r) => rows.some((t) => t.replace(/\s+/g, ' ').includes(`rank ${r} · actor/rollout/ref`)));
    }, 20000);
    await shot(page, '30-ray-paused');
    say('stopping');
    await stopDebugging(page);
    const left = await waitFor('nothing of the Ray job left', () => {
        const procs = [...jobProcesses(ws), ...jobProcessesNamed(/raylet|gcs_server|default_worker|ray_trainer/)];
        return procs.length === 0 ? 'none' : false;
    }, 30000).catch(() => [...jobProcesses(ws), ...jobProcessesNamed(/raylet|gcs_server|default_worker|ray_trainer/)]);
    if (left !== 'none') throw new Error(`processes left after stop: ${left.join('; ')}`);
    return { pausedMs };
}
