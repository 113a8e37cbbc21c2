#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Exhaustive model of serialized mode's gate (src/mpi/gate.c, gate.h).

Every interleaving, under sequential consistency, of three threads:
  the application: three calls, each a plain one (SERIAL_WRAP: skips the
    gate while it is off), one that publishes work (a gated call that turns
    the gate on with gate_app_busy() and may call the MPI again after it)
    or one that completes it (a gated call);
  a piano thread entering the gate twice (gate_enter(), its call, leave),
    its re-check after the fence two loads: gate_bg, then gate_app_in;
  the engine turning the gate off twice (gate_quiet()).
Checks: the application and the piano thread are never in the MPI at once
(unsafe), and no run ends with work published and the gate off (lost).
The code's fences make the Dekker pairs sequentially consistent: the
fenced path of gate_app_close() against gate_enter(), and gate_app_busy()
against gate_quiet().

  tools/gate-model.py [--no-recheck] [--bg-activates] [--app-in-first]

--no-recheck: gate_quiet() does not ask again after the drain (lost > 0);
--bg-activates: a piano thread may turn the gate on itself (unsafe > 0);
--app-in-first: the re-check loads gate_app_in before gate_bg (unsafe > 0).
Exit status 0 when both counts are 0.
"""
import sys, itertools
OFF, ON, DRAIN = 0, 1, 2
ELIDE = True
CHECK = '--no-recheck' not in sys.argv      # drainer re-checks work after DRAIN
BG_ACT = '--bg-activates' in sys.argv
AIN_FIRST = '--app-in-first' in sys.argv

def app_prog(calls):
    # returns list of micro-ops; each op is a function(state)->(newstate or None if blocked, nextpc)
    ops = []
    for c in calls:
        start = len(ops)
        if c == 'plain':
            ops.append(('plain_check',))
        ops += [('set_in',), ('read_bg_close',), ('mpi_in',), ('mpi_out',)]
        if c == 'pub':
            ops += [('work', 1), ('busy_read',), ('busy_lock',), ('busy_set',), ('busy_unlock',),
                    ('mpi_in',), ('mpi_out',)]
        if c == 'done':
            ops += [('work', 0)]
        ops += [('clr_in',), ('end_call',)]
    return ops

def run(calls, bg_n, dr_n):
    prog = app_prog(calls)
    # state: (apc, app_local, bpc, b_n, dpc, d_n, gate_bg, app_in, inside, work, lock, app_mpi, bg_mpi)
    init = (0, 0, 0, bg_n, 0, dr_n, OFF, 0, 0, 0, 0, 0, 0)
    seen = {init}; stack = [init]; bad = 0; lost = 0
    while stack:
        s = stack.pop()
        apc, al, bpc, bn, dpc, dn, gb, ain, ins, work, lock, am, bm = s
        if am and bm:
            bad += 1; continue
        succ = []
        # --- app
        if apc < len(prog):
            op = prog[apc]; k = op[0]
            st = list(s)
            def go(**kw):
                t = list(s)
                names = ['apc','al','bpc','bn','dpc','dn','gb','ain','ins','work','lock','am','bm']
                for n,v in kw.items(): t[names.index(n)] = v
                succ.append(tuple(t))
            if k == 'plain_check':
                if ELIDE and gb == OFF:
                    go(apc=apc+1, al=1)   # elided: skip gate ops
                else:
                    go(apc=apc+1, al=0)
            elif k == 'set_in':
                if al == 1: go(apc=apc+1)
                else: go(apc=apc+1, ain=1)
            elif k == 'read_bg_close':
                if al == 1 or gb == OFF: go(apc=apc+1)
                else:
                    if ins == 0: go(apc=apc+1)   # fenced path: wait for inside == 0
            elif k == 'mpi_in': go(apc=apc+1, am=1)
            elif k == 'mpi_out': go(apc=apc+1, am=0)
            elif k == 'work': go(apc=apc+1, work=op[1])
            elif k == 'busy_read':
                if gb == ON: go(apc=apc+4)
                else: go(apc=apc+1)
            elif k == 'busy_lock':
                if lock == 0: go(apc=apc+1, lock=1)
            elif k == 'busy_set': go(apc=apc+1, gb=ON)
            elif k == 'busy_unlock': go(apc=apc+1, lock=0)
            elif k == 'clr_in':
                if al == 1: go(apc=apc+1)
                else: go(apc=apc+1, ain=0)
            elif k == 'end_call': go(apc=apc+1, al=0)
        names = ['apc','al','bpc','bn','dpc','dn','gb','ain','ins','work','lock','am','bm']
        def gob(**kw):
            t = list(s)
            for n,v in kw.items(): t[names.index(n)] = v
            succ.append(tuple(t))
        # --- bg entrant: 0 read app_in, 1 read gb, 2 inside=1, 3 and 4 the
        # re-check's two loads, 5 mpi_in, 6 mpi_out, 7 inside=0
        if bn > 0:
            if bpc == 0:
                if ain: gob(bn=bn-1)
                else: gob(bpc=1)
            elif bpc == 1:
                if gb != ON and BG_ACT and lock == 0: gob(bpc=2, gb=ON)
                elif gb != ON: gob(bpc=0, bn=bn-1)
                else: gob(bpc=2)
            elif bpc == 2: gob(bpc=3, ins=1)
            elif bpc in (3, 4):
                first = (bpc == 3) != AIN_FIRST    # this load is gate_bg's
                if (gb != ON) if first else ain: gob(bpc=0, bn=bn-1, ins=0)
                else: gob(bpc=bpc+1)
            elif bpc == 5: gob(bpc=6, bm=1)
            elif bpc == 6: gob(bpc=7, bm=0)
            elif bpc == 7: gob(bpc=0, bn=bn-1, ins=0)
        # --- drainer: 0 lock, 1 check ON, 2 set DRAIN, 3 wait inside, 4 set by work, 5 unlock
        if dn > 0:
            if dpc == 0:
                if lock == 0: gob(dpc=1, lock=1)
            elif dpc == 1:
                if gb == ON: gob(dpc=2)
                else: gob(dpc=5)
            elif dpc == 2: gob(dpc=3, gb=DRAIN)
            elif dpc == 3:
                if ins == 0: gob(dpc=4)
            elif dpc == 4: gob(dpc=5, gb=(ON if (CHECK and work) else OFF))
            elif dpc == 5: gob(dpc=0, dn=dn-1, lock=0)
        if not succ:
            # terminal
            if apc == len(prog) and work and gb == OFF:
                lost += 1
        for t in succ:
            if t not in seen:
                seen.add(t); stack.append(t)
    return len(seen), bad, lost

tot_bad = tot_lost = 0
for calls in itertools.product(['plain','pub','done'], repeat=3):
    n, bad, lost = run(list(calls), 2, 2)
    tot_bad += bad; tot_lost += lost
    if bad or lost: print(calls, 'states', n, 'unsafe', bad, 'lost', lost)
print('recheck', CHECK, 'bg-activates', BG_ACT, 'app-in-first', AIN_FIRST, 'unsafe', tot_bad,
      'lost', tot_lost)
sys.exit(1 if tot_bad or tot_lost else 0)
