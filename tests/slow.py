"""The tests the quick tier (`pytest -m "not slow"`) leaves out: each is marked `slow` by `tests/conftest.py`.

A test is slow when it starts processes (the installed `dialogcheck`, servers, Chromium, Ray) or takes seconds
in process (a command run in process by `tests/inprocess.py` starts none); the lists were drawn from
`pytest --durations=0` on a 2-core machine (a test of 0.4 s or more, and a whole module when most of its tests are).
CI runs every test; `tests/test_slow.py` keeps each entry naming a test that exists.
"""

from __future__ import annotations

import pytest

#: Modules whose tests are all slow: mostly runs of the installed command, browsers, Ray and servers.
SLOW_MODULES = frozenset(
    {
        "tests/benchmarks/test_harness.py",
        "tests/cli/test_batch_text.py",
        "tests/cli/test_check_jobs.py",
        "tests/cli/test_check_json_document.py",
        "tests/cli/test_check_output_lock.py",
        "tests/cli/test_check_pipes.py",
        "tests/cli/test_check_report_folders.py",
        "tests/cli/test_check_scenarios.py",
        "tests/cli/test_check_warnings.py",
        "tests/cli/test_damaged_plan.py",
        "tests/cli/test_mcp.py",
        "tests/cli/test_mcp_results_folders.py",
        "tests/cli/test_results_folders_trust.py",
        "tests/cli/test_telemetry_out.py",
        "tests/compare/test_browser.py",
        "tests/compare/test_cli.py",
        "tests/compare/test_folders.py",
        "tests/compare/test_tau_bench.py",
        "tests/connectors/test_run_with_servers.py",
        "tests/engines/test_ray.py",
        "tests/llm/test_calibrate.py",
        "tests/llm/test_calibrate_command.py",
        "tests/llm/test_limit.py",
        "tests/llm/test_real_model.py",
        "tests/llm/test_run_with_llm_user.py",
        "tests/llm/test_simulator_chat.py",
        "tests/llm/test_suspect_runs.py",
        "tests/property/test_properties.py",
        "tests/reliability/test_agent_exits.py",
        "tests/reliability/test_api_key_env.py",
        "tests/reliability/test_broken_peers.py",
        "tests/reliability/test_hostile_records.py",
        "tests/reliability/test_output_size.py",
        "tests/reliability/test_secrets.py",
        "tests/report/test_browser.py",
        "tests/report/test_browser_scale.py",
        "tests/report/test_check_html.py",
        "tests/report/test_judge_evidence.py",
        "tests/test_pytest_plugin.py",
    }
)
#: Single slow tests (`path::function`, every parameter of it) in modules whose other tests are quick.
SLOW_TESTS = frozenset(
    {
        "tests/benchmarks/test_synth.py::test_the_check_benchmark_runs_the_scenario_and_the_sop_as_one_scenario",
        "tests/benchmarks/test_synth.py::test_the_failing_profile_has_about_35_events_of_every_family_and_most_conversations_fail_several_checks",
        "tests/checks/test_patterns.py::test_every_check_family_with_a_pattern_errors_instead_of_hanging",
        "tests/checks/test_patterns.py::test_one_budget_for_all_the_searches_of_a_check_however_many_messages",
        "tests/checks/test_patterns.py::test_texts_searched_at_once_are_found_as_each_alone",
        "tests/cli/test_bad_inputs.py::test_big_inputs_end_quickly_in_bounded_memory",
        "tests/cli/test_check.py::test_installed_command_exit_codes_and_no_traceback",
        "tests/cli/test_check_review_user.py::test_junit_and_html_show_the_suspect_conversation_apart",
        "tests/cli/test_check_review_user.py::test_real_tau2_runs_are_ok_and_a_planted_fault_is_suspect_apart",
        "tests/cli/test_check_review_user.py::test_the_html_page_shows_why_a_conversation_is_suspect",
        "tests/cli/test_core_install.py::test_the_quick_start_runs_the_example_without_any_extra",
        "tests/cli/test_counted_nouns.py::test_check_counts_conversations_and_shards",
        "tests/cli/test_counted_nouns.py::test_validate_counts_1200_files_with_a_separator",
        "tests/cli/test_environment_serve.py::test_a_port_in_use_is_exit_2_saying_so",
        "tests/cli/test_environment_serve.py::test_a_stop_during_a_faults_delay_ends_it",
        "tests/cli/test_environment_serve.py::test_serve_prints_its_addresses_answers_calls_and_sums_up_at_ctrl_c",
        "tests/cli/test_environment_serve.py::test_sigterm_stops_it_as_ctrl_c_does_and_faults_off_fires_none",
        "tests/cli/test_environment_serve.py::test_without_the_sdk_it_serves_http_and_says_how_to_get_mcp",
        "tests/cli/test_path_arguments.py::test_the_installed_command_says_so_in_json_too",
        "tests/cli/test_run.py::test_resume_finishes_a_killed_batch_without_repeating_or_losing_a_run",
        "tests/cli/test_run.py::test_sigint_and_sigterm_keep_finished_runs_and_say_the_batch_was_interrupted",
        "tests/cli/test_validate.py::test_installed_command",
        "tests/commands/test_compare.py::test_the_document_text_and_json_pieces_say_one_thing",
        "tests/compare/test_changes.py::test_each_status_from_one_run_a_side",
        "tests/compare/test_robustness.py::test_the_command_prints_robustness_in_json",
        "tests/connectors/test_agent_option.py::test_an_agent_that_is_down_ends_run_at_once_with_one_message",
        "tests/connectors/test_agent_option.py::test_an_agent_whose_port_takes_no_connection_is_down_after_its_timeout",
        "tests/engines/test_engine_options.py::test_an_unreachable_ray_address_is_a_quick_clear_error",
        "tests/environment/test_schedule.py::test_the_run_seed_is_the_same_in_a_process_with_another_hash_salt",
        "tests/environment/test_serve_mcp.py::test_mcp_clients_of_several_runs_at_once_each_see_their_own",
        "tests/environment/test_serve_mcp.py::test_without_the_sdk_http_is_served_and_the_mcp_address_is_none",
        "tests/events/test_fast.py::test_the_fast_decoder_reads_every_file_as_the_general_loader_does",
        "tests/events/test_fast.py::test_the_fast_decoder_reads_hostile_json_text_as_the_general_loader_does",
        "tests/events/test_native.py::test_every_event_read_writes_back_as_an_object_that_reads_as_the_same_event",
        "tests/events/test_values.py::test_a_long_text_is_shown_as_the_head_of_its_whole_repr",
        "tests/importers/test_otlp.py::test_a_chain_of_spans_each_the_child_of_the_last_is_read_with_a_few_parent_id_reads_a_span",
        "tests/importers/test_otlp.py::test_an_instrumented_agent_loop_is_one_conversation_of_three_events",
        "tests/importers/test_otlp.py::test_an_unreachable_collector_is_reported",
        "tests/importers/test_otlp.py::test_bad_input_names_file_line_and_what_was_expected",
        "tests/importers/test_otlp.py::test_check_with_an_sop_and_the_verdicts_as_telemetry",
        "tests/importers/test_otlp.py::test_log_records_are_not_read_and_the_error_says_so",
        "tests/importers/test_otlp.py::test_memory_stays_flat_as_the_file_grows",
        "tests/importers/test_otlp.py::test_the_verdicts_reach_an_otlp_http_collector",
        "tests/importers/test_rasa_proto.py::test_a_batch_of_trackers_streams_one_line_at_a_time",
        "tests/llm/test_anthropic_client.py::test_success_sends_system_apart_and_reads_usage",
        "tests/llm/test_cache.py::test_a_second_identical_request_makes_no_call",
        "tests/llm/test_cached_mark.py::test_under_safe_env_the_project_s_cache_decides_nothing",
        "tests/llm/test_format_fallback.py::test_a_500_that_does_not_name_the_format_is_still_retried_and_a_plain_request_never_steps_down",
        "tests/llm/test_format_fallback.py::test_check_judges_criteria_against_a_llama_cpp_style_server",
        "tests/llm/test_output_bounds.py::test_a_first_wave_sent_together_asks_json_schema_once",
        "tests/llm/test_output_bounds.py::test_a_request_past_its_wall_clock_limit_is_retried_then_errors_the_check_naming_the_limit",
        "tests/llm/test_retry.py::test_500_then_success_counts_attempts",
        "tests/llm/test_retry.py::test_a_slow_answer_times_out_after_retries",
        "tests/llm/test_seed.py::test_an_openai_compatible_server_gets_the_seed",
        "tests/llm/test_template_budget.py::test_a_render_over_its_budget_stops_with_an_error_naming_the_template",
        "tests/llm/test_template_sandbox.py::test_a_template_reaching_for_internals_stops_every_command_before_anything_runs",
        "tests/llm/test_template_sandbox.py::test_what_the_check_cannot_see_errors_the_run_naming_the_template_and_runs_nothing",
        "tests/reliability/test_held_secrets.py::test_a_held_token_is_masked_before_any_report_cuts_it",
        "tests/reliability/test_held_secrets.py::test_no_held_credential_reaches_a_file_or_a_stream",
        "tests/reliability/test_held_secrets.py::test_the_otlp_endpoint_gets_held_credentials_masked_as_the_otlp_file_does",
        "tests/reliability/test_paths.py::test_a_link_out_of_the_default_cache_folder_is_refused_by_run_and_check",
        "tests/reliability/test_results_folder.py::test_a_second_process_is_kept_out_while_a_batch_runs",
        "tests/reliability/test_results_folder.py::test_two_batches_started_at_once_on_one_folder_one_runs_the_other_is_refused",
        "tests/reliability/test_stops.py::test_a_killed_jobs_worker_is_one_error_line_exit_3_and_a_json_error",
        "tests/report/test_browser_check.py::test_every_skip_badge_is_on_screen",
        "tests/report/test_forged_lines.py::test_no_forged_line_and_no_control_character_in_text_output",
        "tests/report/test_html_writer.py::test_a_value_is_written_once_then_named_by_its_number",
        "tests/runner/test_environment_runs.py::test_a_replay_of_a_run_folder_is_made_only_by_the_environment_that_made_its_states",
        "tests/runner/test_environment_runs.py::test_a_resume_refuses_a_starting_state_a_scenario_gives_that_changed_since_the_batch_started",
        "tests/runner/test_environment_runs.py::test_a_resume_refuses_an_environment_changed_since_the_batch_started_and_finishes_one_that_did_not",
        "tests/runner/test_environment_runs.py::test_check_of_a_run_folder_judges_state_checks_on_the_states_the_runs_recorded",
        "tests/runner/test_environment_runs.py::test_faults_off_on_the_command_line_and_never_with_resume",
        "tests/test_api.py::test_check_conversations_pair_is_searched_within_the_bounded_engine_s_budget",
        "tests/test_docs.py::test_commands_run_as_written",
        "tests/test_docs.py::test_python_examples_run_and_print_what_is_shown",
        "tests/test_docs.py::test_the_commands_said_to_take_format_are_exactly_those_that_take_it",
        "tests/test_package.py::test_no_import_cycle_anywhere",
        "tests/test_package.py::test_the_built_wheel_holds_py_typed",
        "tests/test_pairing.py::test_a_slug_or_an_id_the_pattern_runs_out_of_time_on_is_bad_input_where_it_is",
    }
)


def is_slow(item: pytest.Item) -> bool:
    """Whether `item` is in `SLOW_MODULES` or `SLOW_TESTS` (by its module path from the repository and function name)."""
    module = item.nodeid.split("::", 1)[0]
    function = getattr(item, "originalname", item.name)
    return module in SLOW_MODULES or f"{module}::{function}" in SLOW_TESTS
