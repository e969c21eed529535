import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs JUnit 5 test classes in the soft-RoCE VM and prints one line per test. Exit status 0 only when tests ran,
 * none failed and none was skipped (a skip in the VM means the RDMA device was not usable).
 *
 * <p>Usage: {@code java -cp CLASSPATH RunTests CLASS[#METHOD]...}
 */
public final class RunTests {

    private RunTests() {
    }

    public static void main(String[] args) {
        List<DiscoverySelector> selectors = new ArrayList<>();
        for (String name : args) {
            selectors.add(name.contains("#") ? selectMethod(name) : selectClass(name));
        }
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectors).build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Map<String, Long> started = new ConcurrentHashMap<>();
        TestExecutionListener lines = new TestExecutionListener() {
            @Override
            public void executionStarted(TestIdentifier id) {
                started.put(id.getUniqueId(), System.nanoTime());
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                System.out.println("SKIP " + id.getDisplayName() + ": " + reason);
            }

            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest() && result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                    return;
                }
                long ms = (System.nanoTime() - started.getOrDefault(id.getUniqueId(), System.nanoTime())) / 1_000_000;
                System.out.printf("%s %s (%d ms)%s%n", result.getStatus() == TestExecutionResult.Status.SUCCESSFUL
                    ? "PASS" : "FAIL", id.getDisplayName(), ms,
                    result.getThrowable().map(t -> ": " + t).orElse(""));
                result.getThrowable().ifPresent(t -> t.printStackTrace(System.out));
            }
        };
        launcher.execute(request, summary, lines);
        TestExecutionSummary s = summary.getSummary();
        System.out.printf("tests: %d found, %d succeeded, %d failed, %d skipped, %d aborted%n",
            s.getTestsFoundCount(), s.getTestsSucceededCount(), s.getTotalFailureCount(), s.getTestsSkippedCount(),
            s.getTestsAbortedCount() + s.getContainersAbortedCount());
        boolean ok = s.getTestsFoundCount() > 0 && s.getTotalFailureCount() == 0 && s.getTestsSkippedCount() == 0
            && s.getTestsAbortedCount() == 0 && s.getContainersAbortedCount() == 0;
        System.exit(ok ? 0 : 1);
    }
}
