package io.strata.chaos.checker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Tarjan's strongly connected components over a directed graph in compressed adjacency form, iterative
 * (an explicit stack, so a chain of 10^6 nodes does not overflow the thread stack). Time and memory are
 * linear in nodes + edges.
 *
 * <p>Stateless; thread-safe.
 */
final class StronglyConnectedComponents {
    private StronglyConnectedComponents() {
    }

    /**
     * @param nodeCount nodes are {@code 0..nodeCount-1}
     * @param edgeStart edges of node {@code n} are {@code edgeTarget[edgeStart[n] .. edgeStart[n+1])}
     * @param edgeTarget edge targets
     * @return the components of two or more nodes, each sorted ascending, in order of their smallest node
     */
    static List<int[]> nonTrivial(int nodeCount, int[] edgeStart, int[] edgeTarget) {
        int[] index = new int[nodeCount];
        int[] low = new int[nodeCount];
        boolean[] onStack = new boolean[nodeCount];
        Arrays.fill(index, -1);
        int[] stack = new int[nodeCount];
        int stackSize = 0;
        int[] callNode = new int[nodeCount];
        int[] callEdge = new int[nodeCount];
        int nextIndex = 0;
        List<int[]> components = new ArrayList<>();
        for (int root = 0; root < nodeCount; root++) {
            if (index[root] >= 0) {
                continue;
            }
            int depth = 0;
            callNode[0] = root;
            callEdge[0] = edgeStart[root];
            index[root] = low[root] = nextIndex++;
            stack[stackSize++] = root;
            onStack[root] = true;
            while (depth >= 0) {
                int node = callNode[depth];
                if (callEdge[depth] < edgeStart[node + 1]) {
                    int target = edgeTarget[callEdge[depth]++];
                    if (index[target] < 0) {
                        index[target] = low[target] = nextIndex++;
                        stack[stackSize++] = target;
                        onStack[target] = true;
                        depth++;
                        callNode[depth] = target;
                        callEdge[depth] = edgeStart[target];
                    } else if (onStack[target]) {
                        low[node] = Math.min(low[node], index[target]);
                    }
                    continue;
                }
                if (low[node] == index[node]) {
                    int size = 0;
                    int member;
                    int top = stackSize;
                    do {
                        member = stack[--top];
                        size++;
                    } while (member != node);
                    int[] component = Arrays.copyOfRange(stack, top, stackSize);
                    for (int m : component) {
                        onStack[m] = false;
                    }
                    stackSize = top;
                    if (size > 1) {
                        Arrays.sort(component);
                        components.add(component);
                    }
                }
                depth--;
                if (depth >= 0) {
                    int parent = callNode[depth];
                    low[parent] = Math.min(low[parent], low[node]);
                }
            }
        }
        components.sort((a, b) -> Integer.compare(a[0], b[0]));
        return components;
    }
}
