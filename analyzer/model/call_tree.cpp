#include "model/call_tree.h"

namespace gpuleak::analyzer {

uint32_t CallTree::node(uint32_t parent, const std::string& function, const std::string& file,
                        int line, uint64_t pc, bool python, bool user, uint64_t return_address) {
    std::string key = file;
    key += '\0';
    key += function;
    auto [f, fresh_function] =
        functions_.try_emplace(std::move(key), static_cast<uint32_t>(functions_.size() + 1));
    auto [it, fresh] =
        by_key_.try_emplace(Key{parent, f->second, pc}, static_cast<uint32_t>(nodes_.size()));
    if (fresh)
        nodes_.push_back({parent, f->second, pc, return_address ? return_address : pc, python, user,
                          function, file, line});
    return it->second;
}

} // namespace gpuleak::analyzer
