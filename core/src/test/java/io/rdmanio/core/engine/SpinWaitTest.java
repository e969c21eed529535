package io.rdmanio.core.engine;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The spin's crowded-processor back-off as a state machine, driven with made-up yield durations and clock readings
 * (nothing here depends on how fast this machine is).
 */
class SpinWaitTest {

    private static final long SPIN = 50_000;

    @BeforeEach
    @AfterEach
    void forget() {
        SpinWait.reset();
    }

    @Test
    void quickYieldsNeverStopTheSpin() {
        long t = 1_000_000_000L;
        for (int i = 0; i < 10_000; i++) {
            SpinWait.yielded(t, SpinWait.CROWDED_YIELD_NANOS);
            t += SpinWait.CROWDED_YIELD_NANOS;
        }
        assertEquals(SPIN, SpinWait.budget(SPIN, t));
        assertEquals(0, SpinWait.budget(0, t), "no spin configured stays no spin");
    }

    @Test
    void aCrowdedYieldSkipsSpinsForTheRestThenOneProbes() {
        long t = 5_000_000_000L;
        long spells = SpinWait.crowdedSpells();
        SpinWait.yielded(t, SpinWait.CROWDED_YIELD_NANOS + 1);
        long restEnd = t + SpinWait.CROWDED_YIELD_NANOS + 1 + SpinWait.MIN_REST_NANOS;
        assertEquals(spells + 1, SpinWait.crowdedSpells());
        assertEquals(0, SpinWait.budget(SPIN, t + 1), "parks at once while resting");
        assertEquals(0, SpinWait.budget(SPIN, restEnd - 1));
        // A second crowded yield within the spell (another spinner) changes nothing.
        SpinWait.yielded(restEnd - 1 - 2 * SpinWait.CROWDED_YIELD_NANOS, 2 * SpinWait.CROWDED_YIELD_NANOS);
        assertEquals(spells + 1, SpinWait.crowdedSpells());
        assertEquals(0, SpinWait.budget(SPIN, restEnd - 1));
        assertEquals(SPIN, SpinWait.budget(SPIN, restEnd), "the rest over, a spin probes again");
        assertEquals(SPIN, SpinWait.budget(SPIN, restEnd + 1));
    }

    @Test
    void restsDoubleWhileProbesFindItCrowdedUpToTheMost() {
        long t = 9_000_000_000L;
        long expected = SpinWait.MIN_REST_NANOS;
        for (int spell = 0; spell < 20; spell++) {
            assertEquals(expected, SpinWait.nextRest());
            SpinWait.yielded(t, SpinWait.CROWDED_YIELD_NANOS + 1);
            t += SpinWait.CROWDED_YIELD_NANOS + 1;
            assertEquals(0, SpinWait.budget(SPIN, t + expected - 1));
            t += expected;
            assertEquals(SPIN, SpinWait.budget(SPIN, t));
            expected = Math.min(2 * expected, SpinWait.MAX_REST_NANOS);
        }
        assertEquals(SpinWait.MAX_REST_NANOS, SpinWait.nextRest());
    }

    @Test
    void aCalmRunOfYieldsBringsTheRestBackToTheStart() {
        long t = 2_000_000_000L;
        SpinWait.yielded(t, SpinWait.CROWDED_YIELD_NANOS + 1);
        t += SpinWait.MAX_REST_NANOS;
        assertEquals(SPIN, SpinWait.budget(SPIN, t));
        assertEquals(2 * SpinWait.MIN_REST_NANOS, SpinWait.nextRest());
        for (int i = 0; i < SpinWait.CALM_YIELDS - 1; i++) {
            SpinWait.yielded(t, 1_000);
        }
        assertEquals(2 * SpinWait.MIN_REST_NANOS, SpinWait.nextRest(), "one calm yield short");
        // A crowded one in between starts the count again.
        SpinWait.yielded(t, SpinWait.CROWDED_YIELD_NANOS + 1);
        t += SpinWait.MAX_REST_NANOS;
        assertEquals(SPIN, SpinWait.budget(SPIN, t));
        for (int i = 0; i < SpinWait.CALM_YIELDS; i++) {
            SpinWait.yielded(t, 1_000);
        }
        assertEquals(SpinWait.MIN_REST_NANOS, SpinWait.nextRest());
    }
}
