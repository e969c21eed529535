package io.rdmanio.core.protocol;

import static io.rdmanio.core.protocol.CreditWindow.*;
import static io.rdmanio.core.protocol.FrameDescriptor.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayDeque;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CreditWindowTest {

    @Test
    void sendsWhileCreditLasts() {
        CreditWindow w = new CreditWindow(4, 2, 2, 2);
        assertTrue(w.canSendData());
        w.onSend(TYPE_DATA);
        w.onSend(TYPE_DATA);
        assertFalse(w.canSendData());
        assertTrue(w.canSendControl());
        assertNull(w.onReceive(TYPE_CREDIT, 4, 2));
        assertTrue(w.canSendData());
        assertEquals(3, w.controlGranted());
    }

    @Test
    void creditViolationsAreNamed() {
        CreditWindow w = new CreditWindow(4, 2, 4, 2);
        w.onSend(TYPE_DATA);
        assertNull(w.onReceive(TYPE_DATA, 5, 2));
        assertEquals("dataCredit went backwards (5 -> 4)", w.onReceive(TYPE_DATA, 4, 2));
        assertEquals("controlCredit went backwards (2 -> 1)", w.onReceive(TYPE_DATA, 5, 1));
        assertEquals("dataCredit 9 exceeds what the peer can have granted (1 data frames sent + 4 slots)",
            w.onReceive(TYPE_DATA, 9, 2));
        assertEquals("controlCredit 3 exceeds what the peer can have granted (0 control frames sent + 2 slots)",
            w.onReceive(TYPE_DATA, 5, 3));
        CreditWindow x = new CreditWindow(1, 2, 4, 2);
        assertNull(x.onReceive(TYPE_DATA, 4, 2));
        assertEquals("DATA frame beyond the data credit advertised (1)", x.onReceive(TYPE_DATA, 4, 2));
    }

    @Test
    void creditForDataWaitsForHalfTheWindowAndForNoDataToCarryIt() {
        CreditWindow w = new CreditWindow(8, 2, 8, 2);
        for (int i = 0; i < 4; i++) {
            assertNull(w.onReceive(TYPE_DATA, 8, 2));
        }
        w.dataSlotsFreed(3);
        assertEquals(NONE, w.creditDue(false));
        w.dataSlotsFreed(1);
        assertEquals(CREDIT_FOR_DATA, w.creditDue(false));
        assertEquals(NONE, w.creditDue(true), "a data frame carries the grants instead");
        w.onSend(TYPE_CREDIT);
        assertEquals(0, w.unadvertisedData());
        assertEquals(NONE, w.creditDue(false));
    }

    /**
     * The end of a download: the reader spends its control credit on CREDIT frames after the streamer has gone
     * quiet, then wants to send FIN. The streamer is not write-blocked, yet it must replenish the reader.
     */
    @Test
    void aPeerThatSpentItsControlCreditIsReplenished() {
        CreditWindow reader = new CreditWindow(4, 2, 4, 2);
        CreditWindow streamer = new CreditWindow(4, 2, 4, 2);
        for (int i = 0; i < 4; i++) {
            streamer.onSend(TYPE_DATA);
            assertNull(reader.onReceive(TYPE_DATA, streamer.dataGranted(), streamer.controlGranted()));
        }
        for (int round = 0; round < 2; round++) {
            reader.dataSlotsFreed(2);
            assertEquals(CREDIT_FOR_DATA, reader.creditDue(false));
            reader.onSend(TYPE_CREDIT);
            assertNull(streamer.onReceive(TYPE_CREDIT, reader.dataGranted(), reader.controlGranted()));
            if (round == 0) {
                assertEquals(NONE, streamer.creditDue(false), "the reader still has control credit");
            }
        }
        assertFalse(reader.canSendControl(), "the reader spent its control credit: no FIN possible yet");
        assertEquals(CREDIT_REPLENISH, streamer.creditDue(false));
        streamer.onSend(TYPE_CREDIT);
        assertNull(reader.onReceive(TYPE_CREDIT, streamer.dataGranted(), streamer.controlGranted()));
        assertTrue(reader.canSendControl(), "FIN can go");
        assertEquals(NONE, reader.creditDue(false), "the replenishing frame is not answered");
        assertEquals(NONE, streamer.creditDue(false));
    }

    /**
     * Two windows exchanging frames through in-flight queues, with a random schedule, where the applications read
     * nothing once they stop: the run must go quiet, and it must never exceed a receiver's posted slots.
     */
    @Test
    void controlFramesNeverPingPong() {
        Random random = new Random(42);
        for (int run = 0; run < 2000; run++) {
            int d = 1 + random.nextInt(4);
            int c = 2 + random.nextInt(2);
            Side a = new Side(new CreditWindow(d, c, d, c), d + c + 1);
            Side b = new Side(new CreditWindow(d, c, d, c), d + c + 1);
            a.peer = b;
            b.peer = a;
            int readsLeft = random.nextInt(50);
            int finsLeft = 2;
            long lastTotal = -1;
            int quietRounds = 0;
            for (int step = 0; step < 100_000 && quietRounds < 50; step++) {
                Side s = random.nextBoolean() ? a : b;
                switch (random.nextInt(5)) {
                    case 0 -> s.tryWrite();
                    case 1 -> {
                        if (readsLeft > 0 && s.readOne()) {
                            readsLeft--;
                        }
                    }
                    case 2 -> {
                        if (finsLeft > 0 && random.nextInt(20) == 0 && !s.finPending) {
                            s.finPending = true;
                            finsLeft--;
                        }
                    }
                    default -> s.deliverOne();
                }
                a.flushControl();
                b.flushControl();
                long total = a.framesSent + b.framesSent;
                boolean idle = a.inFlight.isEmpty() && b.inFlight.isEmpty();
                quietRounds = idle && total == lastTotal ? quietRounds + 1 : 0;
                lastTotal = total;
            }
            assertTrue(quietRounds >= 50, "run " + run + " did not go quiet: " + a.w + " / " + b.w);
            // Every pending FIN got out once both sides are quiet: nobody is left without control credit.
            assertFalse(a.finPending, "run " + run + ": FIN stuck at a " + a.w);
            assertFalse(b.finPending, "run " + run + ": FIN stuck at b " + b.w);
        }
    }

    private static final class Side {
        final CreditWindow w;
        final int posted;
        Side peer;
        final ArrayDeque<long[]> inFlight = new ArrayDeque<>();
        int heldData;
        int postedNow;
        boolean finPending;
        long framesSent;
        int writesLeft = 20;

        Side(CreditWindow w, int posted) {
            this.w = w;
            this.posted = posted;
            this.postedNow = posted;
        }

        void send(int type) {
            w.onSend(type);
            framesSent++;
            inFlight.add(new long[] {type, w.dataGranted(), w.controlGranted()});
        }

        void tryWrite() {
            if (writesLeft > 0 && w.canSendData()) {
                writesLeft--;
                send(TYPE_DATA);
            }
        }

        boolean readOne() {
            if (heldData == 0) {
                return false;
            }
            heldData--;
            postedNow++;
            w.dataSlotsFreed(1);
            return true;
        }

        void flushControl() {
            if (finPending && w.canSendControl()) {
                finPending = false;
                send(TYPE_FIN);
            }
            int due = w.creditDue(false);
            if (due != NONE) {
                send(TYPE_CREDIT);
            }
        }

        void deliverOne() {
            long[] f = inFlight.poll();
            if (f == null) {
                return;
            }
            Side p = peer;
            assertTrue(p.postedNow > 0, "receiver not ready");
            p.postedNow--;
            String err = p.w.onReceive((int) f[0], f[1], f[2]);
            assertNull(err);
            if (f[0] == TYPE_DATA) {
                p.heldData++;
            } else {
                p.postedNow++;
            }
        }
    }
}
