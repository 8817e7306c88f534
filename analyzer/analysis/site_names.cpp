#include "analysis/site_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "common/format_util.h"
#include "model/source_files.h"

namespace gpuleak::analyzer {
namespace {

// A frame that only says its function went on in an inlined part of itself: GCC splits a
// function's slow path off (`f(int) [clone .part.0]`) and inlines it back, so DWARF shows f
// inlined into f ("Pool::get at pool.cpp:43 ← Pool::get:41"). A recursive call inlined into
// itself reads the same; not inlined, it is a frame of its own.
bool same_function_inlined_into_it(const Frame& caller, const Frame& inner) {
    return inner.inlined && caller.file == inner.file &&
           source_function(caller) == source_function(inner);
}

// The frames of the program's own code outside the headline, innermost first.
std::vector<const Frame*> callers(const Site& site) {
    std::vector<const Frame*> out;
    for (size_t i = site.headline_index + 1; i < site.frames.size(); ++i)
        if (site.frames[i].origin == FrameOrigin::User &&
            !same_function_inlined_into_it(site.frames[i], site.frames[i - 1]))
            out.push_back(&site.frames[i]);
    return out;
}

std::string caller_name(const Frame& f, const Frame& inner) {
    std::string name = display_function(f);
    if (f.file != inner.file) return name + " (" + frame_location(f) + ")";
    return f.line ? name + ":" + std::to_string(f.line) : name;
}

// Names tell frames apart as users do: two clones of one function at one line are one place.
// (Sites differ elsewhere in their stacks, which the callers then show.)
using Key = std::tuple<std::string, std::string, int>;

Key key_of(const Frame& f) {
    return {source_function(f), f.file, f.line};
}

// The frames between the allocation and the headline that are the program's or a library's (a
// framework's own function tells apart two allocations of one user call), outermost first.
std::vector<const Frame*> inner_frames(const Site& site) {
    std::vector<const Frame*> out;
    for (int i = site.headline_index; i-- > 0;)
        if (site.frames[i].origin == FrameOrigin::User ||
            site.frames[i].origin == FrameOrigin::Library)
            out.push_back(&site.frames[i]);
    return out;
}

// The libraries' named frames outside the headline, innermost first: where the program's own
// frames do not tell two sites apart (a library's thread has none: the gradients PyTorch's
// autograd engine makes through AddmmBackward0 and AccumulateGrad), the library's callers may.
// Not the interpreter's: its C functions say nothing of the program.
std::vector<const Frame*> outer_library_frames(const Site& site) {
    std::vector<const Frame*> out;
    for (size_t i = site.headline_index + 1; i < site.frames.size(); ++i)
        if (!site.frames[i].function.empty() && site.frames[i].origin == FrameOrigin::Library)
            out.push_back(&site.frames[i]);
    return out;
}

// The first index at which `chains` are not all equal (a chain too short counts as one more
// kind); the longest chain's size if they are.
size_t first_difference(const std::vector<std::vector<const Frame*>>& chains) {
    size_t longest = 0;
    for (const auto& chain : chains)
        longest = std::max(longest, chain.size());
    for (size_t i = 0; i < longest; ++i) {
        std::map<Key, int> seen;
        for (const auto& chain : chains)
            ++seen[i < chain.size() ? key_of(*chain[i]) : Key{}];
        if (seen.size() > 1) return i;
    }
    return longest;
}

// The source text of the call a frame stands at, from its column: Python's position gives its
// end; a native call's ends at the parenthesis that closes its first. "" where not known.
std::string call_text(const Frame& f) {
    if (f.column <= 0 || f.line <= 0) return "";
    const std::string& text = source_files().raw_line(f.file, f.line);
    size_t start = static_cast<size_t>(f.column - 1);
    if (start >= text.size()) return "";
    // GCC's column of a call is its parenthesis: the callee's name stands before it.
    auto name_char = [&](size_t i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        return std::isalnum(c) || c == '_' || c == ':' || c == '.';
    };
    if (!f.python && text[start] == '(')
        while (start > 0 && (name_char(start - 1) ||
                             (start >= 2 && text[start - 1] == '>' && text[start - 2] == '-')))
            start -= text[start - 1] == '>' ? 2 : 1;
    size_t end = std::string::npos;
    if (f.python && f.end_column > 0) {
        end = f.end_line == f.line ? static_cast<size_t>(f.end_column - 1) : text.size();
    } else if (!f.python) {
        int depth = 0;
        for (size_t i = text.find('(', start); i != std::string::npos && i < text.size(); ++i) {
            depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
            if (depth == 0) {
                end = i + 1;
                break;
            }
        }
    }
    if (end == std::string::npos || end <= start || end > text.size()) return "";
    // Cut only between UTF-8 characters: the name goes into JSON, which must be valid UTF-8.
    auto continuation = [&](size_t i) { return i < text.size() && (text[i] & 0xC0) == 0x80; };
    constexpr size_t kLongest = 48;
    const bool cut = end - start > kLongest;
    if (cut) end = start + kLongest - 3;
    while (start < end && continuation(start))
        ++start;
    while (end > start && continuation(end))
        --end;
    if (end <= start) return "";
    std::string call = text.substr(start, end - start);
    if (cut || (f.python && f.end_line > f.line)) call += "...";
    return call;
}

// Where the source says where a frame stands (its column), that is its place: copies of one
// call (an optimizer's clones, unrolled iterations) are one. Else its address or offset.
bool same_place(const Frame& a, const Frame& b) {
    if (a.python != b.python || a.file != b.file || a.line != b.line) return false;
    if (a.column > 0 && b.column > 0)
        return a.column == b.column && a.end_line == b.end_line && a.end_column == b.end_column;
    return a.column == b.column && a.pc == b.pc && a.function == b.function;
}

// The first frame, from the innermost, at which the sites' places differ (or one has none).
size_t first_differing_frame(const SiteTable& table, const std::vector<uint32_t>& sites) {
    const std::vector<Frame>& first = table.site(sites[0]).frames;
    for (size_t at = 0;; ++at)
        for (uint32_t id : sites) {
            const std::vector<Frame>& frames = table.site(id).frames;
            if (at >= frames.size() || at >= first.size() || !same_place(frames[at], first[at]))
                return at;
        }
}

// Sites still named alike differ within one line: two calls on it (`a, b = model(x), model(y)`).
// Where the first frame at which they differ gives each its column, the call's text names it,
// or its column where the texts are alike; else its site number.
void tell_calls_on_one_line_apart(Report& report, const std::vector<uint32_t>& group) {
    const SiteTable& table = *report.site_table;
    std::map<std::string, std::vector<uint32_t>> alike;
    for (uint32_t id : group)
        alike[report.names[id].label].push_back(id);
    for (const auto& entry : alike) {
        // Not a structured binding: clang before 16 cannot capture one in the lambda below.
        const std::vector<uint32_t>& members = entry.second;
        if (members.size() < 2) continue;
        const std::vector<Frame>& first = table.site(members[0]).frames;
        const size_t at = first_differing_frame(table, members);
        std::vector<std::string> calls, columns;
        for (uint32_t id : members) {
            const Site& site = table.site(id);
            const std::vector<Frame>& frames = site.frames;
            if (at >= frames.size() || at >= first.size() || frames[at].line != first[at].line ||
                frames[at].file != first[at].file || frames[at].column <= 0)
                break;
            const std::string call = call_text(frames[at]);
            // A caller's line is not in the name yet.
            const std::string in = static_cast<int>(at) == site.headline_index || !site.headline()
                                       ? ""
                                       : " in " + caller_name(frames[at], *site.headline());
            const std::string column = "column " + std::to_string(frames[at].column);
            calls.push_back(call.empty() ? "" : "call " + call + in);
            columns.push_back(call.empty() ? column + in : "call " + call + " at " + column + in);
        }
        auto distinct = [&](const std::vector<std::string>& names) {
            std::map<std::string, int> seen;
            for (const std::string& n : names)
                if (n.empty() || ++seen[n] > 1) return false;
            return names.size() == members.size();
        };
        const std::vector<std::string>* names = distinct(calls)     ? &calls
                                                : distinct(columns) ? &columns
                                                                    : nullptr;
        for (size_t m = 0; m < members.size(); ++m)
            report.names[members[m]].label +=
                names ? ", " + (*names)[m] : " (site #" + std::to_string(members[m]) + ")";
    }
}

} // namespace

std::string headline_name(const Site& site) {
    const Frame* f = site.headline();
    return f ? display_function(*f) + " at " + frame_location(*f) : "unknown site";
}

void name_sites(Report& report) {
    const SiteTable& table = *report.site_table;
    report.names.assign(report.sites.size(), {});
    std::map<Key, std::vector<uint32_t>> by_headline;
    for (const SiteStats& s : report.sites) {
        const Site& site = table.site(s.site);
        report.names[s.site].label = headline_name(site);
        const Frame* f = site.headline();
        if (!f) continue;
        report.names[s.site].source = source_files().line(f->file, f->line);
        by_headline[key_of(*f)].push_back(s.site);
    }
    for (const auto& [key, group] : by_headline) {
        if (group.size() < 2) continue;
        std::vector<std::vector<const Frame*>> chains;
        size_t longest = 0;
        for (uint32_t id : group) {
            chains.push_back(callers(table.site(id)));
            longest = std::max(longest, chains.back().size());
        }
        // The fewest callers that make the names distinct.
        size_t depth = 1;
        for (; depth <= longest; ++depth) {
            std::map<std::vector<Key>, int> seen;
            bool unique = true;
            for (const auto& chain : chains) {
                std::vector<Key> prefix;
                for (size_t i = 0; i < depth && i < chain.size(); ++i)
                    prefix.push_back(key_of(*chain[i]));
                unique = unique && ++seen[prefix] == 1;
            }
            if (unique) break;
        }
        bool unique = depth <= longest;
        if (!unique) depth = 0; // the callers are the same: the frames inside tell them apart
        std::vector<std::vector<const Frame*>> inner, outer;
        for (uint32_t id : group) {
            inner.push_back(inner_frames(table.site(id)));
            outer.push_back(outer_library_frames(table.site(id)));
        }
        // The first depth inside at which the group's frames are not all equal, else outside.
        const size_t differ = unique ? 0 : first_difference(inner);
        const bool inside = !unique && std::any_of(inner.begin(), inner.end(), [&](const auto& c) {
            return differ < c.size();
        });
        const size_t outer_differ = unique || inside ? 0 : first_difference(outer);
        std::vector<std::string> base(group.size());
        for (size_t g = 0; g < group.size(); ++g) {
            std::string& label = report.names[group[g]].label;
            const Frame* inner_most = table.site(group[g]).headline();
            for (size_t i = 0; i < depth && i < chains[g].size(); ++i) {
                label += " ← " + caller_name(*chains[g][i], *inner_most);
                inner_most = chains[g][i];
            }
            base[g] = label;
            const Frame& headline = *table.site(group[g]).headline();
            if (inside && differ < inner[g].size())
                label += " via " + caller_name(*inner[g][differ], headline);
            else if (!unique && !inside && outer_differ < outer[g].size())
                label += " ← " + caller_name(*outer[g][outer_differ], headline);
        }
        // Sites still named alike (a line calling two functions that share their first frames:
        // `keep(model(torch.empty(n)))`, whose model runs two layers): the first frame inside at
        // which those alone differ.
        if (inside) {
            std::map<std::string, std::vector<size_t>> alike;
            for (size_t g = 0; g < group.size(); ++g)
                alike[report.names[group[g]].label].push_back(g);
            for (const auto& [label, members] : alike) {
                if (members.size() < 2) continue;
                std::vector<std::vector<const Frame*>> theirs;
                for (size_t g : members)
                    theirs.push_back(inner[g]);
                const size_t d = first_difference(theirs);
                for (size_t g : members)
                    if (d < inner[g].size())
                        report.names[group[g]].label =
                            base[g] + " via " +
                            caller_name(*inner[g][d], *table.site(group[g]).headline());
            }
        }
        tell_calls_on_one_line_apart(report, group);
    }
}

} // namespace gpuleak::analyzer
