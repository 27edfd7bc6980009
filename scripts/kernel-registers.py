#!/usr/bin/env python3
"""What the GPU's own compiler makes of the project's kernels: registers per invocation and the driver's other
statistics, read through Vulkan's VK_KHR_pipeline_executable_properties (NVIDIA reports "Register Count").

WebGPU does not say how many registers a kernel takes, yet registers decide how many workgroups a compute unit holds
as much as workgroup memory does. Dawn prints the SPIR-V it hands the driver when its `dump_shaders` toggle is on
(FA_DAWN_TOGGLES=dump_shaders, packages/core/src/node/index.ts), with every override constant already substituted;
scripts/kernel-registers.mjs splits that print into one SPIR-V file per pipeline and assembles each with spirv-as
(SPIRV-Tools). This script compiles each file into a compute pipeline on the first Vulkan device, with the features
the device offers except robust buffer access (Dawn leaves it off when its bounds checks are off), and prints one
line per pipeline.

Usage: python3 scripts/kernel-registers.py FILE.spv [FILE.spv ...]   (a FILE.spvasm beside each names its bindings)
Needs only Python's standard library and a Vulkan loader (libvulkan.so.1) with a driver.
"""
import ctypes as C
import re
import sys
from pathlib import Path

VK_SUCCESS = 0
# Structure types (Vulkan registry).
ST_APPLICATION_INFO = 0
ST_INSTANCE_CREATE_INFO = 1
ST_DEVICE_QUEUE_CREATE_INFO = 2
ST_DEVICE_CREATE_INFO = 3
ST_COMPUTE_PIPELINE_CREATE_INFO = 29
ST_PIPELINE_SHADER_STAGE_CREATE_INFO = 18
ST_SHADER_MODULE_CREATE_INFO = 16
ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32
ST_PIPELINE_LAYOUT_CREATE_INFO = 30
ST_PHYSICAL_DEVICE_FEATURES_2 = 1000059000
ST_VULKAN_1_1_FEATURES = 49
ST_VULKAN_1_2_FEATURES = 51
ST_VULKAN_1_3_FEATURES = 53
ST_PIPELINE_EXECUTABLE_FEATURES = 1000269000
ST_PIPELINE_INFO = 1000269001
ST_PIPELINE_EXECUTABLE_PROPERTIES = 1000269002
ST_PIPELINE_EXECUTABLE_INFO = 1000269003
ST_PIPELINE_EXECUTABLE_STATISTIC = 1000269004
ST_MAXIMAL_RECONVERGENCE_FEATURES = 1000434000
ST_COOPERATIVE_MATRIX_FEATURES = 1000506000
ST_SUBGROUP_UNIFORM_CONTROL_FLOW_FEATURES = 1000323000
ST_REQUIRED_SUBGROUP_SIZE = 1000225001
PIPELINE_CREATE_CAPTURE_STATISTICS = 0x40
SHADER_STAGE_REQUIRE_FULL_SUBGROUPS = 0x2
SHADER_STAGE_COMPUTE = 0x20
DESCRIPTOR_UNIFORM_BUFFER = 6
DESCRIPTOR_STORAGE_BUFFER = 7

# Optional device extensions: enabled with their feature structs where the device offers them.
EXTENSIONS = {
    b'VK_KHR_pipeline_executable_properties': (ST_PIPELINE_EXECUTABLE_FEATURES, 1),
    b'VK_KHR_shader_maximal_reconvergence': (ST_MAXIMAL_RECONVERGENCE_FEATURES, 1),
    b'VK_KHR_cooperative_matrix': (ST_COOPERATIVE_MATRIX_FEATURES, 2),
    b'VK_KHR_shader_subgroup_uniform_control_flow': (ST_SUBGROUP_UNIFORM_CONTROL_FLOW_FEATURES, 1),
}


def features_struct(stype, count):
    """A Vk*Features struct: sType, pNext, then `count` VkBool32 members."""
    class Features(C.Structure):
        _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32 * count)]
    f = Features()
    f.sType = stype
    return f


class ApplicationInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('pApplicationName', C.c_char_p),
                ('applicationVersion', C.c_uint32), ('pEngineName', C.c_char_p), ('engineVersion', C.c_uint32),
                ('apiVersion', C.c_uint32)]


class InstanceCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('pApplicationInfo', C.POINTER(ApplicationInfo)), ('enabledLayerCount', C.c_uint32),
                ('ppEnabledLayerNames', C.c_void_p), ('enabledExtensionCount', C.c_uint32),
                ('ppEnabledExtensionNames', C.c_void_p)]


class QueueFamilyProperties(C.Structure):
    _fields_ = [('queueFlags', C.c_uint32), ('queueCount', C.c_uint32), ('timestampValidBits', C.c_uint32),
                ('minImageTransferGranularity', C.c_uint32 * 3)]


class DeviceQueueCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('queueFamilyIndex', C.c_uint32), ('queueCount', C.c_uint32),
                ('pQueuePriorities', C.POINTER(C.c_float))]


class DeviceCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('queueCreateInfoCount', C.c_uint32), ('pQueueCreateInfos', C.POINTER(DeviceQueueCreateInfo)),
                ('enabledLayerCount', C.c_uint32), ('ppEnabledLayerNames', C.c_void_p),
                ('enabledExtensionCount', C.c_uint32), ('ppEnabledExtensionNames', C.POINTER(C.c_char_p)),
                ('pEnabledFeatures', C.c_void_p)]


class ExtensionProperties(C.Structure):
    _fields_ = [('extensionName', C.c_char * 256), ('specVersion', C.c_uint32)]


class ShaderModuleCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32), ('codeSize', C.c_size_t),
                ('pCode', C.c_void_p)]


class DescriptorSetLayoutBinding(C.Structure):
    _fields_ = [('binding', C.c_uint32), ('descriptorType', C.c_uint32), ('descriptorCount', C.c_uint32),
                ('stageFlags', C.c_uint32), ('pImmutableSamplers', C.c_void_p)]


class DescriptorSetLayoutCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32), ('bindingCount', C.c_uint32),
                ('pBindings', C.POINTER(DescriptorSetLayoutBinding))]


class PushConstantRange(C.Structure):
    _fields_ = [('stageFlags', C.c_uint32), ('offset', C.c_uint32), ('size', C.c_uint32)]


class PipelineLayoutCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32), ('setLayoutCount', C.c_uint32),
                ('pSetLayouts', C.POINTER(C.c_void_p)), ('pushConstantRangeCount', C.c_uint32),
                ('pPushConstantRanges', C.POINTER(PushConstantRange))]


class PipelineShaderStageCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32), ('stage', C.c_uint32),
                ('module', C.c_void_p), ('pName', C.c_char_p), ('pSpecializationInfo', C.c_void_p)]


class RequiredSubgroupSize(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('requiredSubgroupSize', C.c_uint32)]


class ComputePipelineCreateInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('flags', C.c_uint32),
                ('stage', PipelineShaderStageCreateInfo), ('layout', C.c_void_p),
                ('basePipelineHandle', C.c_void_p), ('basePipelineIndex', C.c_int32)]


class PipelineInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('pipeline', C.c_void_p)]


class ExecutableProperties(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('stages', C.c_uint32), ('name', C.c_char * 256),
                ('description', C.c_char * 256), ('subgroupSize', C.c_uint32)]


class ExecutableInfo(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('pipeline', C.c_void_p),
                ('executableIndex', C.c_uint32)]


class StatisticValue(C.Union):
    _fields_ = [('b32', C.c_uint32), ('i64', C.c_int64), ('u64', C.c_uint64), ('f64', C.c_double)]


class Statistic(C.Structure):
    _fields_ = [('sType', C.c_uint32), ('pNext', C.c_void_p), ('name', C.c_char * 256),
                ('description', C.c_char * 256), ('format', C.c_uint32), ('value', StatisticValue)]


def check(result, what):
    if result != VK_SUCCESS:
        raise RuntimeError(f'{what} failed: VkResult {result}')


def handle():
    return C.c_void_p()


def bindings_of(asm):
    """(set, binding, descriptor type) of each buffer the SPIR-V declares, from its disassembly."""
    decorations = {}
    for name, kind, value in re.findall(r'OpDecorate (%\S+) (DescriptorSet|Binding) (\d+)', asm):
        decorations.setdefault(name, {})[kind] = int(value)
    found = []
    for name, where in decorations.items():
        storage = re.search(rf'^\s*{re.escape(name)} = OpVariable \S+ (\w+)', asm, re.M)
        kind = DESCRIPTOR_UNIFORM_BUFFER if storage and storage.group(1) == 'Uniform' else DESCRIPTOR_STORAGE_BUFFER
        found.append((where.get('DescriptorSet', 0), where.get('Binding', 0), kind))
    return sorted(found)


def main(paths):
    vk = C.CDLL('libvulkan.so.1')
    app = ApplicationInfo(ST_APPLICATION_INFO, None, b'kernel-registers', 1, b'none', 1, (1 << 22) | (3 << 12))
    instance = handle()
    check(vk.vkCreateInstance(C.byref(InstanceCreateInfo(ST_INSTANCE_CREATE_INFO, None, 0, C.pointer(app), 0, None,
                                                          0, None)), None, C.byref(instance)), 'vkCreateInstance')
    count = C.c_uint32(0)
    vk.vkEnumeratePhysicalDevices(instance, C.byref(count), None)
    devices = (C.c_void_p * count.value)()
    vk.vkEnumeratePhysicalDevices(instance, C.byref(count), devices)
    physical = C.c_void_p(devices[0])

    vk.vkEnumerateDeviceExtensionProperties(physical, None, C.byref(count), None)
    offered = (ExtensionProperties * count.value)()
    vk.vkEnumerateDeviceExtensionProperties(physical, None, C.byref(count), offered)
    offered_names = {e.extensionName for e in offered}
    if b'VK_KHR_pipeline_executable_properties' not in offered_names:
        sys.exit('this Vulkan device does not offer VK_KHR_pipeline_executable_properties')

    # Every feature the device offers (asked with one chain), then the same chain given to vkCreateDevice, less
    # robust buffer and image access.
    chain = [features_struct(ST_VULKAN_1_1_FEATURES, 12), features_struct(ST_VULKAN_1_2_FEATURES, 47),
             features_struct(ST_VULKAN_1_3_FEATURES, 15)]
    extensions = [name for name in EXTENSIONS if name in offered_names]
    chain += [features_struct(*EXTENSIONS[name]) for name in extensions]
    features2 = features_struct(ST_PHYSICAL_DEVICE_FEATURES_2, 55)
    previous = features2
    for link in chain:
        previous.pNext = C.cast(C.pointer(link), C.c_void_p)
        previous = link
    vk.vkGetPhysicalDeviceFeatures2(physical, C.byref(features2))
    features2.flags[0] = 0  # robustBufferAccess
    chain[2].flags[0] = 0   # robustImageAccess

    vk.vkGetPhysicalDeviceQueueFamilyProperties(physical, C.byref(count), None)
    families = (QueueFamilyProperties * count.value)()
    vk.vkGetPhysicalDeviceQueueFamilyProperties(physical, C.byref(count), families)
    family = next(i for i, f in enumerate(families) if f.queueFlags & 2)
    priority = C.c_float(1.0)
    queue = DeviceQueueCreateInfo(ST_DEVICE_QUEUE_CREATE_INFO, None, 0, family, 1, C.pointer(priority))
    names = (C.c_char_p * len(extensions))(*extensions)
    device = handle()
    check(vk.vkCreateDevice(physical, C.byref(DeviceCreateInfo(
        ST_DEVICE_CREATE_INFO, C.cast(C.pointer(features2), C.c_void_p), 0, 1, C.pointer(queue), 0, None,
        len(extensions), names, None)), None, C.byref(device)), 'vkCreateDevice')

    proc = vk.vkGetDeviceProcAddr
    proc.restype = C.c_void_p
    proc.argtypes = [C.c_void_p, C.c_char_p]
    signature = C.CFUNCTYPE(C.c_int32, C.c_void_p, C.c_void_p, C.POINTER(C.c_uint32), C.c_void_p)
    get_properties = signature(proc(device, b'vkGetPipelineExecutablePropertiesKHR'))
    get_statistics = signature(proc(device, b'vkGetPipelineExecutableStatisticsKHR'))

    for path in paths:
        code = Path(path).read_bytes()
        asm = Path(path).with_suffix('.spvasm').read_text()
        entry = re.search(r'OpEntryPoint GLCompute %\S+ "([^"]+)"', asm).group(1)
        words = (C.c_uint32 * (len(code) // 4)).from_buffer_copy(code)
        module = handle()
        check(vk.vkCreateShaderModule(device, C.byref(ShaderModuleCreateInfo(
            ST_SHADER_MODULE_CREATE_INFO, None, 0, len(code), C.cast(words, C.c_void_p))), None, C.byref(module)),
            f'{path}: vkCreateShaderModule')
        found = bindings_of(asm)
        sets = []
        for s in range(max([b[0] for b in found], default=-1) + 1):
            rows = [DescriptorSetLayoutBinding(b, kind, 1, SHADER_STAGE_COMPUTE, None) for (t, b, kind) in found if t == s]
            array = (DescriptorSetLayoutBinding * max(len(rows), 1))(*rows)
            layout = handle()
            check(vk.vkCreateDescriptorSetLayout(device, C.byref(DescriptorSetLayoutCreateInfo(
                ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, None, 0, len(rows), array)), None, C.byref(layout)),
                'vkCreateDescriptorSetLayout')
            sets.append(layout.value)
        set_array = (C.c_void_p * max(len(sets), 1))(*sets)
        push = PushConstantRange(SHADER_STAGE_COMPUTE, 0, 128)
        pipeline_layout = handle()
        check(vk.vkCreatePipelineLayout(device, C.byref(PipelineLayoutCreateInfo(
            ST_PIPELINE_LAYOUT_CREATE_INFO, None, 0, len(sets), set_array, 1, C.pointer(push))), None,
            C.byref(pipeline_layout)), 'vkCreatePipelineLayout')
        stage = PipelineShaderStageCreateInfo(ST_PIPELINE_SHADER_STAGE_CREATE_INFO, None, 0, SHADER_STAGE_COMPUTE,
                                              module, entry.encode(), None)
        # As Dawn makes a pipeline that uses subgroup matrices: full subgroups of the device's one size.
        subgroup = RequiredSubgroupSize(ST_REQUIRED_SUBGROUP_SIZE, None, 32)
        if 'CooperativeMatrixKHR' in asm:
            stage.flags = SHADER_STAGE_REQUIRE_FULL_SUBGROUPS
            stage.pNext = C.cast(C.pointer(subgroup), C.c_void_p)
        info = ComputePipelineCreateInfo(ST_COMPUTE_PIPELINE_CREATE_INFO, None, PIPELINE_CREATE_CAPTURE_STATISTICS,
                                         stage, pipeline_layout, None, -1)
        pipeline = handle()
        check(vk.vkCreateComputePipelines(device, None, 1, C.byref(info), None, C.byref(pipeline)),
              f'{path}: vkCreateComputePipelines')
        pinfo = PipelineInfo(ST_PIPELINE_INFO, None, pipeline)
        check(get_properties(device, C.addressof(pinfo), C.byref(count), None), 'vkGetPipelineExecutablePropertiesKHR')
        stats = []
        for index in range(count.value):
            einfo = ExecutableInfo(ST_PIPELINE_EXECUTABLE_INFO, None, pipeline, index)
            n = C.c_uint32(0)
            check(get_statistics(device, C.addressof(einfo), C.byref(n), None), 'vkGetPipelineExecutableStatisticsKHR')
            array = (Statistic * n.value)()
            for s in array:
                s.sType = ST_PIPELINE_EXECUTABLE_STATISTIC
            check(get_statistics(device, C.addressof(einfo), C.byref(n), C.cast(array, C.c_void_p)),
                  'vkGetPipelineExecutableStatisticsKHR')
            for s in array:
                value = [s.value.b32 != 0, s.value.i64, s.value.u64, s.value.f64][s.format]
                stats.append(f'{s.name.decode()}={value}')
        print(f'{Path(path).stem}\t' + '\t'.join(stats), flush=True)


if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
        print(__doc__)
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    main(sys.argv[1:])
