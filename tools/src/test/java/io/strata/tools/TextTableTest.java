package io.strata.tools;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TextTableTest {
    @Test
    void columnsAreAsWideAsTheirWidestCellOrMinimumAndLinesHaveNoTrailingSpaces() {
        TextTable table = new TextTable().column("GROUP", 8).column("TOPIC", 0).column("LAG", 0)
            .row("g", "a-long-topic", 1)
            .row("group-two", "t", null);

        assertThat(table.lines()).containsExactly(
            "GROUP     TOPIC        LAG",
            "g         a-long-topic 1",
            "group-two t            -");
    }

    @Test
    void aRowMustHaveOneCellPerColumn() {
        TextTable table = new TextTable().column("A", 0).column("B", 0);

        assertThatThrownBy(() -> table.row("only-one")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cells=1, columns=2");
    }
}
