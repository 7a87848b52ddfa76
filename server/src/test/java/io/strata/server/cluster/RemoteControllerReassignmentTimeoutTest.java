package io.strata.server.cluster;

import io.strata.metadata.NotControllerException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A forwarded reassignment request that found no active controller in time ends as Kafka's
 * ForwardingManager ends it: a timeout (REQUEST_TIMED_OUT), not NOT_CONTROLLER.
 */
class RemoteControllerReassignmentTimeoutTest {

    @Test
    void theEndOfRetriesBecomesATimeoutWithTheSameMessage() {
        CompletableFuture<String> forwarded = new CompletableFuture<>();
        CompletableFuture<String> answered = RemoteController.timedOutAsTimeout(forwarded);
        forwarded.completeExceptionally(new NotControllerException("no active controller answered ALTER_PARTITION_REASSIGNMENTS in time"));
        assertThatThrownBy(() -> answered.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(TimeoutException.class).hasMessage("no active controller answered ALTER_PARTITION_REASSIGNMENTS in time");
    }

    @Test
    void answersAndOtherFailuresPassThrough() throws Exception {
        assertThat(RemoteController.timedOutAsTimeout(CompletableFuture.completedFuture("answer")).get(5, TimeUnit.SECONDS)).isEqualTo("answer");
        IllegalStateException bug = new IllegalStateException("bug");
        assertThatThrownBy(() -> RemoteController.timedOutAsTimeout(CompletableFuture.<String>failedFuture(bug)).get(5, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class).cause().isSameAs(bug);
    }
}
