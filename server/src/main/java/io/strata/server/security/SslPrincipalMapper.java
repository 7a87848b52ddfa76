package io.strata.server.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * {@code ssl.principal.mapping.rules}: turns a certificate's subject DN (RFC 2253, as
 * {@code X500Principal.getName()} writes it) into a principal name, as Kafka's rules do. The
 * value is a list of rules separated by commas or new lines, tried in order; the first that
 * matches decides:
 * <pre>
 *   DEFAULT                            the DN unchanged
 *   RULE:pattern/replacement/          the whole DN must match the Java regex pattern; the name is
 *   RULE:pattern/replacement/L         the replacement ($1 ... groups), optionally lower- (L) or
 *   RULE:pattern/replacement/U         upper-cased (U)
 * </pre>
 * A '/' inside a pattern or replacement is written {@code \/}; commas inside a rule belong to it
 * (rules end at a comma only after their final '/' and flag). A DN that no rule matches has no
 * principal: its connection is refused.
 *
 * <p>Immutable; safe from any thread.
 */
public final class SslPrincipalMapper {
    private final List<Rule> rules;

    private record Rule(Pattern pattern, String replacement, char caseFlag) {
        Optional<String> apply(String distinguishedName) {
            if (pattern == null) {
                return Optional.of(distinguishedName);
            }
            Matcher matcher = pattern.matcher(distinguishedName);
            if (!matcher.matches()) {
                return Optional.empty();
            }
            String name = matcher.replaceAll(replacement);
            return Optional.of(switch (caseFlag) {
                case 'L' -> name.toLowerCase(Locale.ROOT);
                case 'U' -> name.toUpperCase(Locale.ROOT);
                default -> name;
            });
        }
    }

    private SslPrincipalMapper(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /**
     * @throws IllegalArgumentException naming the position and the problem when {@code rules} is malformed
     */
    public static SslPrincipalMapper parse(String rules) {
        List<Rule> parsed = new ArrayList<>();
        int position = 0;
        int length = rules.length();
        while (true) {
            position = skipSeparators(rules, position);
            if (position >= length) {
                break;
            }
            if (rules.startsWith("DEFAULT", position)) {
                parsed.add(new Rule(null, null, ' '));
                position += "DEFAULT".length();
            } else if (rules.startsWith("RULE:", position)) {
                position = parseRule(rules, position + "RULE:".length(), parsed);
            } else {
                throw new IllegalArgumentException("expected DEFAULT or RULE:pattern/replacement/[LU] at position " + position + " of '" + rules + "'");
            }
            position = skipSpaces(rules, position);
            if (position < length && rules.charAt(position) != ',' && rules.charAt(position) != '\n') {
                throw new IllegalArgumentException("unexpected '" + rules.charAt(position) + "' after a rule at position " + position + " of '" + rules + "'");
            }
        }
        if (parsed.isEmpty()) {
            throw new IllegalArgumentException("no rule in '" + rules + "' (DEFAULT keeps the DN as it is)");
        }
        return new SslPrincipalMapper(parsed);
    }

    private static int parseRule(String rules, int start, List<Rule> parsed) {
        StringBuilder pattern = new StringBuilder();
        int position = readUntilSlash(rules, start, pattern);
        StringBuilder replacement = new StringBuilder();
        position = readUntilSlash(rules, position, replacement);
        char caseFlag = ' ';
        if (position < rules.length() && (rules.charAt(position) == 'L' || rules.charAt(position) == 'U')) {
            caseFlag = rules.charAt(position);
            position++;
        }
        try {
            parsed.add(new Rule(Pattern.compile(pattern.toString()), replacement.toString(), caseFlag));
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("invalid pattern in rule at position " + start + ": " + e.getDescription(), e);
        }
        return position;
    }

    /** Reads up to the next unescaped '/', which it consumes; {@code \/} stands for '/'. */
    private static int readUntilSlash(String rules, int start, StringBuilder out) {
        int position = start;
        while (position < rules.length()) {
            char c = rules.charAt(position);
            if (c == '\\' && position + 1 < rules.length() && rules.charAt(position + 1) == '/') {
                out.append('/');
                position += 2;
            } else if (c == '/') {
                return position + 1;
            } else {
                out.append(c);
                position++;
            }
        }
        throw new IllegalArgumentException("rule starting at position " + start + " is not closed by '/' in '" + rules + "'");
    }

    private static int skipSeparators(String rules, int position) {
        while (position < rules.length() && (Character.isWhitespace(rules.charAt(position)) || rules.charAt(position) == ',')) {
            position++;
        }
        return position;
    }

    private static int skipSpaces(String rules, int position) {
        while (position < rules.length() && (rules.charAt(position) == ' ' || rules.charAt(position) == '\t')) {
            position++;
        }
        return position;
    }

    /** The principal name for {@code distinguishedName}, or empty when no rule matches it. */
    public Optional<String> map(String distinguishedName) {
        for (Rule rule : rules) {
            Optional<String> name = rule.apply(distinguishedName);
            if (name.isPresent()) {
                return name;
            }
        }
        return Optional.empty();
    }
}
