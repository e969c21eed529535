package io.rdmanio.selector.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** {@code rdmanio.fallbackMillis}: default, accepted values, and errors that name the property and the value. */
class FallbackSettingTest {

    @Test
    void defaultWhenUnsetOrBlank() {
        assertEquals(FallbackSetting.DEFAULT_MILLIS, FallbackSetting.parse(null));
        assertEquals(FallbackSetting.DEFAULT_MILLIS, FallbackSetting.parse(" "));
    }

    @Test
    void wholeMillisecondsFromZeroToAnHour() {
        assertEquals(0, FallbackSetting.parse("0"));
        assertEquals(250, FallbackSetting.parse(" 250 "));
        assertEquals(FallbackSetting.MAX_MILLIS, FallbackSetting.parse(Long.toString(FallbackSetting.MAX_MILLIS)));
    }

    @Test
    void errorsNameThePropertyAndValue() {
        assertEquals("-Drdmanio.fallbackMillis=soon is not a whole number of milliseconds",
                assertThrows(ConfigException.class, () -> FallbackSetting.parse("soon")).getMessage());
        assertEquals("-Drdmanio.fallbackMillis=-1 is out of range: expected 0 to 3600000 ms",
                assertThrows(ConfigException.class, () -> FallbackSetting.parse("-1")).getMessage());
    }

    @Test
    void configLoaderChecksItAtStart() {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(
                name -> name.equals(FallbackSetting.PROPERTY) ? "1.5" : null, SystemFabrics.INSTANCE));
        assertEquals("-Drdmanio.fallbackMillis=1.5 is not a whole number of milliseconds", e.getMessage());
    }
}
