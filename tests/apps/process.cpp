#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace ridgeline::test {

namespace {
process_result run_impl(const std::vector<std::string>& args, int timeout_s, int signal, double after_s,
                        const std::string& trigger = {});
}

process_result run_ridgeline(const std::vector<std::string>& args, int timeout_s) {
    return run_impl(args, timeout_s, 0, 0);
}

process_result run_ridgeline_signalled(const std::vector<std::string>& args, int signal, double after_s, int timeout_s) {
    return run_impl(args, timeout_s, signal, after_s);
}

process_result run_ridgeline_signalled_at(const std::vector<std::string>& args, int signal, const std::string& trigger,
                                          int timeout_s) {
    return run_impl(args, timeout_s, signal, 0, trigger);
}

namespace {
process_result run_impl(const std::vector<std::string>& args, int timeout_s, int signal, double after_s,
                        const std::string& trigger) {
    int out_pipe[2], err_pipe[2];
    if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        std::vector<char*> argv;
        std::string bin = RIDGELINE_BINARY;
        argv.push_back(bin.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    process_result r;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = started + std::chrono::seconds(timeout_s);
    int open_fds = 2;
    bool killed = false;
    bool signalled = signal == 0;
    while (open_fds > 0) {
        const bool due = trigger.empty() ? std::chrono::steady_clock::now() - started >= std::chrono::duration<double>(after_s)
                                         : r.err.find(trigger) != std::string::npos;
        if (!signalled && due) {
            ::kill(pid, signal);
            signalled = true;
        }
        if (std::chrono::steady_clock::now() > deadline && !killed) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        if (::poll(fds, 2, 200) < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
            char buf[65536];
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else {
                (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
            }
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status))
        r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        r.exit_code = -WTERMSIG(status);
    return r;
}
}  // namespace

}  // namespace ridgeline::test
