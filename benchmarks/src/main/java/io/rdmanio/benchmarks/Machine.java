package io.rdmanio.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** The machine a run measured, read from the system at run time. */
final class Machine {
    private Machine() {
    }

    static String cpu() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // not Linux: fall through
        }
        return System.getProperty("os.arch");
    }

    static String os() {
        try {
            for (String l : Files.readAllLines(Path.of("/etc/os-release"))) {
                if (l.startsWith("PRETTY_NAME=")) {
                    return l.substring("PRETTY_NAME=".length()).replace("\"", "");
                }
            }
        } catch (IOException e) {
            // fall through
        }
        return System.getProperty("os.name");
    }

    static String kernel() {
        return System.getProperty("os.name") + " " + System.getProperty("os.version");
    }

    static String java() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }

    static boolean kvm() {
        return Files.exists(Path.of("/dev/kvm"));
    }

    /** Whether the CPU advertises hardware virtualization (without it /dev/kvm cannot run a guest fast). */
    static boolean virtualizationFlags() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("flags") && (l.contains(" vmx") || l.contains(" svm"))) {
                    return true;
                }
            }
        } catch (IOException e) {
            // fall through
        }
        return false;
    }

    private static String kvmText() {
        return (kvm() ? "/dev/kvm present" : "no /dev/kvm") + ", "
                + (virtualizationFlags() ? "vmx/svm in the CPU flags" : "no vmx/svm CPU flag");
    }

    static long memoryMiB() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (l.startsWith("MemTotal:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024;
                }
            }
        } catch (IOException e) {
            // fall through
        }
        return -1;
    }

    /** The load average when the run started: on a shared machine the other processes are part of the setup. */
    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    static String describe() {
        return String.format(Locale.ROOT, "machine: %d cores (%s), %d MiB, %s, %s, %s, %s; load average at start %s",
                Runtime.getRuntime().availableProcessors(), cpu(), memoryMiB(), os(), kernel(), java(),
                kvmText(), load());
    }

    static String json() {
        return String.format(Locale.ROOT, "{\"cores\": %d, \"cpu\": %s, \"memoryMiB\": %d, \"os\": %s, \"kernel\": %s, "
                        + "\"java\": %s, \"kvm\": %s, \"load\": %s}%n",
                Runtime.getRuntime().availableProcessors(), ConnectionTest.quote(cpu()), memoryMiB(),
                ConnectionTest.quote(os()), ConnectionTest.quote(kernel()), ConnectionTest.quote(java()),
                ConnectionTest.quote(kvmText()), ConnectionTest.quote(load()));
    }
}
