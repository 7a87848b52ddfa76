package io.strata.chaos.cluster;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeProcessTest {
    @Test
    void pauseResumeKillFollowTheTransitionTable() throws Exception {
        NodeProcess node = new NodeProcess(7);
        assertThatThrownBy(node::pause).isInstanceOf(IllegalStateException.class).hasMessageContaining("node 7").hasMessageContaining("state=STOPPED");
        Process process = new ProcessBuilder("sleep", "60").start();
        node.started(process);
        assertThat(node.state()).isEqualTo(NodeProcess.State.RUNNING);
        assertThat(node.pid()).isEqualTo(process.pid());
        assertThatThrownBy(node::resume).hasMessageContaining("state=RUNNING expected=PAUSED");

        node.pause();
        assertThat(node.state()).isEqualTo(NodeProcess.State.PAUSED);
        assertThat(processState(process.pid())).isEqualTo('T');
        assertThatThrownBy(() -> node.started(process)).hasMessageContaining("cannot start node 7: state=PAUSED");

        node.resume();
        assertThat(processState(process.pid())).isNotEqualTo('T');
        node.kill9();
        assertThat(process.isAlive()).isFalse();
        assertThat(node.state()).isEqualTo(NodeProcess.State.STOPPED);
        assertThat(node.pid()).isEqualTo(-1);
        assertThatThrownBy(node::kill9).hasMessageContaining("cannot kill node 7: state=STOPPED");
    }

    @Test
    void aProcessThatExitsByItselfIsStopped() throws Exception {
        NodeProcess node = new NodeProcess(1);
        Process process = new ProcessBuilder("true").start();
        node.started(process);
        process.waitFor();
        assertThat(node.state()).isEqualTo(NodeProcess.State.STOPPED);
    }

    /** The state letter of /proc/PID/stat ('T' stopped), read until it settles or a deadline passes. */
    private static char processState(long pid) throws Exception {
        long deadlineNanos = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        char state;
        do {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.UTF_8);
            state = stat.charAt(stat.lastIndexOf(')') + 2);
        } while (state != 'T' && state != 'S' && System.nanoTime() - deadlineNanos < 0);
        return state;
    }
}
