"""Behaviour of the tf.train, tf.errors, tf.summary, tf.graph_util and related names added to
close tf.compat.v1 surface gaps (expected values from TensorFlow 2.21's tf.compat.v1)."""

import os
import warnings

import pytest

import dataflow as df

tf = df.compat.v1


def _run(t, feed_dict=None):
    with tf.Session(graph=t.graph) as sess:
        return sess.run(t, feed_dict)


# -- tf.errors -------------------------------------------------------------------------------------


def test_error_code_from_exception_type_does_map_classes_to_codes():
    assert tf.errors.error_code_from_exception_type(tf.errors.NotFoundError) == 5
    assert tf.errors.error_code_from_exception_type(tf.errors.DataLossError) == 15
    with pytest.warns(UserWarning, match="Unknown class exception"):
        unknown = tf.errors.error_code_from_exception_type(ValueError)
    assert isinstance(unknown, tf.errors.UnknownError)


def test_exception_type_from_error_code_does_map_codes_to_classes():
    assert tf.errors.exception_type_from_error_code(5) is tf.errors.NotFoundError
    assert tf.errors.exception_type_from_error_code(16) is tf.errors.UnauthenticatedError
    with pytest.raises(KeyError):
        tf.errors.exception_type_from_error_code(99)
    with pytest.raises(KeyError):
        tf.errors.exception_type_from_error_code(tf.errors.OK)


def test_raise_exception_on_not_ok_status_does_raise_the_class_of_the_code():
    with tf.errors.raise_exception_on_not_ok_status() as status:
        assert status.code == tf.errors.OK
    with pytest.raises(tf.errors.NotFoundError, match="gone"):
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.set(tf.errors.NOT_FOUND, "gone")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(tf.errors.UnknownError) as info:
            with tf.errors.raise_exception_on_not_ok_status() as status:
                status.set(42, "odd")
    assert info.value.error_code == 42


def test_op_error_is_at_the_top_level_with_its_code():
    assert tf.OpError is tf.errors.OpError
    e = tf.OpError(None, None, "msg", 3)
    assert (e.error_code, str(e)) == (3, "msg")


# -- tf.logging, tf.resource_loader, versions ------------------------------------------------------


def test_task_level_status_message_does_log_an_error(capsys):
    tf.logging.TaskLevelStatusMessage("status here")
    assert "ERROR:dataflow:status here" in capsys.readouterr().err


def test_resource_loader_does_resolve_paths_next_to_the_caller():
    here = os.path.dirname(os.path.abspath(__file__))
    assert tf.resource_loader.get_data_files_path() == here
    assert tf.resource_loader.get_path_to_datafile("x.txt") == os.path.join(here, "x.txt")
    assert tf.resource_loader.get_root_dir_with_all_resources() == here
    assert tf.resource_loader.readahead_file_path("/a/b") == "/a/b"
    assert tf.resource_loader.load_resource("__init__.py").startswith(b'"""')
    with pytest.raises(OSError):
        tf.resource_loader.load_resource("no_such_file.txt")


def test_graph_def_versions_are_the_ones_written():
    assert tf.GRAPH_DEF_VERSION == 134
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER == 0
    assert tf.GRAPH_DEF_VERSION_MIN_PRODUCER == 0
