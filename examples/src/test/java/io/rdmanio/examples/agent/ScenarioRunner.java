package io.rdmanio.examples.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Runs named scenarios and prints one line each, {@code NAME: RESULT} (or {@code NAME: FAILED WHAT} when one
 * throws), for programs whose output is compared across runs ({@link AbstractScenarioConformanceTest}).
 */
final class ScenarioRunner {

    /** One scenario: what a program saw, as one line of text. */
    interface Scenario {
        String run() throws Exception;
    }

    /** One step of a scenario that may throw. */
    interface Step {
        Object run() throws Exception;
    }

    private ScenarioRunner() {
    }

    /** Runs the scenarios {@code args} names, all of them when it names none, in order. */
    static void run(Map<String, Scenario> all, String[] args, Function<Throwable, String> describe) {
        List<String> chosen = args.length == 0 ? new ArrayList<>(all.keySet()) : List.of(args);
        for (String name : chosen) {
            String result;
            try {
                result = all.get(name).run();
            } catch (Throwable t) {
                result = "FAILED " + describe.apply(t);
                if (t instanceof java.util.concurrent.TimeoutException) {
                    // Something waited past its bound: what every thread was doing, for the test's report.
                    dumpThreads(name);
                }
            }
            System.out.println(name + ": " + result);
        }
    }

    private static void dumpThreads(String scenario) {
        StringBuilder sb = new StringBuilder("threads when " + scenario + " timed out:\n");
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            sb.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
            for (StackTraceElement e : stack) {
                sb.append("    at ").append(e).append('\n');
            }
        });
        System.err.print(sb);
    }

    /** What {@code step} returned ({@code ok} for null), or what it threw as {@code describe} puts it. */
    static String attempt(Step step, String ok, Function<Throwable, String> describe) {
        try {
            Object r = step.run();
            return r == null ? ok : String.valueOf(r);
        } catch (Exception e) {
            return describe.apply(e);
        }
    }
}
