package io.rdmanio.benchmarks;

import java.util.Arrays;

/**
 * The spread the pair benchmarks print ({@link VirtualThreadsBench}, {@link FileTransferBench}): for each transport
 * the min / median / max of its runs, then the same of the second transport over the first, pair by pair.
 */
final class PairSpread {

    private PairSpread() {
    }

    /** The median of {@code values} (not modified). */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    /**
     * Prints, indented by four spaces, {@code LABEL min / median / max UNIT} for each transport of
     * {@code values[transport][pair]}, then {@code LABEL2/LABEL1 min / median / max x} of the ratios per pair.
     */
    static void print(Transport[] transports, double[][] values, String unit) {
        String[] labels = Arrays.stream(transports).map(Transport::label).toArray(String[]::new);
        for (int t = 0; t < labels.length; t++) {
            System.out.printf("    %-4s %6.0f / %6.0f / %6.0f %s%n", labels[t], min(values[t]), median(values[t]),
                    max(values[t]), unit);
        }
        double[] ratios = new double[values[0].length];
        for (int p = 0; p < ratios.length; p++) {
            ratios[p] = values[1][p] / values[0][p];
        }
        System.out.printf("    %s/%s %.2f / %.2f / %.2f x%n", labels[1], labels[0], min(ratios), median(ratios),
                max(ratios));
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }
}
