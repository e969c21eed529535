package io.rdmanio.examples.hadoop;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.ipc.ProtocolSignature;
import org.apache.hadoop.mapred.AMFeedback;
import org.apache.hadoop.mapred.MapTaskCompletionEventsUpdate;
import org.apache.hadoop.mapred.TaskCompletionEvent;
import org.apache.hadoop.mapred.TaskUmbilicalProtocol;

/**
 * The reduce task's umbilical to its ApplicationMaster, in process: every map of the job has succeeded on the one
 * NodeManager at {@code shuffleUrl}, and nothing else happens. It records when the task first reports its status,
 * which {@code Shuffle} does once its copy phase completes (every map output fetched), so the fetch time can be
 * told apart from the final merge. Thread-safe: the event fetcher, the fetchers and the task's thread call it.
 */
final class MapsDone {

    private final TaskCompletionEvent[] events;
    private volatile long firstStatusNanos;
    private final List<String> errors = new ArrayList<>();

    MapsDone(int maps, String shuffleUrl) {
        events = new TaskCompletionEvent[maps];
        for (int m = 0; m < maps; m++) {
            events[m] = new TaskCompletionEvent(m, ShuffleJob.mapAttempt(m), m, true,
                    TaskCompletionEvent.Status.SUCCEEDED, shuffleUrl);
        }
    }

    /** {@link System#nanoTime()} at the task's first status report, 0 before it. */
    long firstStatusNanos() {
        return firstStatusNanos;
    }

    synchronized List<String> errors() {
        return List.copyOf(errors);
    }

    /** The umbilical itself: a proxy, as the task's RPC client is (some of the protocol's types are not public). */
    TaskUmbilicalProtocol umbilical() {
        return (TaskUmbilicalProtocol) Proxy.newProxyInstance(TaskUmbilicalProtocol.class.getClassLoader(),
                new Class<?>[] {TaskUmbilicalProtocol.class}, this::invoke);
    }

    private Object invoke(Object proxy, Method method, Object[] args) {
        switch (method.getName()) {
            case "getMapCompletionEvents":
                return mapCompletionEvents((int) args[1], (int) args[2]);
            case "statusUpdate":
                if (firstStatusNanos == 0) {
                    firstStatusNanos = System.nanoTime();
                }
                AMFeedback feedback = new AMFeedback();
                feedback.setTaskFound(true);
                return feedback;
            case "shuffleError", "fsError", "fatalError", "reportDiagnosticInfo":
                synchronized (this) {
                    errors.add(method.getName() + ": " + args[1]);
                }
                return null;
            case "canCommit":
                return true;
            case "getProtocolVersion":
                return TaskUmbilicalProtocol.versionID;
            case "getProtocolSignature":
                return new ProtocolSignature(TaskUmbilicalProtocol.versionID, null);
            case "getTask":
                throw new UnsupportedOperationException("the task is already running");
            case "hashCode":
                return System.identityHashCode(proxy);
            case "equals":
                return proxy == args[0];
            case "toString":
                return "the ApplicationMaster of " + ShuffleJob.JOB;
            default:
                // reportNextRecordRange, done, commitPending, preempted, checkpoint ids: nothing to record
                return null;
        }
    }

    private MapTaskCompletionEventsUpdate mapCompletionEvents(int fromIndex, int maxLocs) {
        int from = Math.min(fromIndex, events.length);
        int to = Math.min(events.length, from + maxLocs);
        TaskCompletionEvent[] some = new TaskCompletionEvent[to - from];
        System.arraycopy(events, from, some, 0, some.length);
        return new MapTaskCompletionEventsUpdate(some, false);
    }
}
